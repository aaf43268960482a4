"""vLLM's own config checks: read once by the extractor, run three-valued by lint."""
