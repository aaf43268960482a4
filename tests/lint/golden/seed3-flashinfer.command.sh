#!/bin/sh
# Seed incident 3 as it was launched; lint with the copy that runs it:
#   patchops lint --vllm /usr/local/corex/lib/python3/dist-packages examples/seed-flashinfer-missing.sh
export CUDA_VISIBLE_DEVICES=0
VLLM_ATTENTION_BACKEND=FLASHINFER python -m vllm.entrypoints.openai.api_server \
    --model /models/Qwen2.5-7B-Instruct \
    --max-model-len 8192 \
    --port 8000
