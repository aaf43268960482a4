#!/bin/sh
# The first seed incident as launched on the CoreX box (vLLM 0.6.3).
python -m vllm.entrypoints.openai.api_server --model /models/Qwen2.5-32B-Instruct \
    -tp 4 --num-scheduler-steps 4 --enable-chunked-prefill False \
    --max-model-len 100000 --max-num-batched-tokens 8192
