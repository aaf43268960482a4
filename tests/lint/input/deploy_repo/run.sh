#!/bin/sh
docker run --runtime nvidia --gpus 2 \
  -v ~/.cache/huggingface:/root/.cache/huggingface \
  -p 8000:8000 --ipc=host \
  -e VLLM_USE_V1=1 \
  vllm/vllm-openai:v0.9.2 \
  --model mistralai/Mistral-7B-v0.1 \
  --max-model-len 4096 --gpu-memory-utilisation 0.9 --max-num-seqs "$SEQS" \
  --swap-space -1
