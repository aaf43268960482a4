# The user wants CUDA graphs off and custom all-reduce off; the fork ignores both flags.
vllm serve /models/Qwen2.5-7B-Instruct -tp 2 --enforce-eager --disable-custom-all-reduce
