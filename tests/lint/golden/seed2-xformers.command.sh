vllm serve /models/Qwen2.5-7B-Instruct --num-scheduler-steps 4 --max-model-len 4096 --max-num-batched-tokens 8192
