"""What a lint reads: serve specs, vLLM --config YAML, launch commands, model configs."""
