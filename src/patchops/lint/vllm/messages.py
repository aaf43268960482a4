"""vLLM's own messages: what each release prints when it refuses or warns, as its source words them.

A rule quotes these in its findings (`vllm_message`); `{name}` marks a value vLLM fills in. Grouped
by the rule that prevents them.
"""

from __future__ import annotations

# attention-backend-env-removed
# envs.validate_environ (vllm/envs.py 0.20; platforms/interface.py 0.33), called from
# EngineArgs.create_engine_config: a warning, or ValueError with --fail-on-environ-validation.
UNKNOWN_ENV_VARIABLE = "Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND"

# batched-tokens-below-max-seqs
BATCHED_TOKENS_BELOW_MAX_SEQS = ("max_num_batched_tokens ({max_num_batched_tokens}) must be greater "
                                 "than or equal to max_num_seqs ({max_num_seqs}).")

# batched-tokens-below-model-len
BATCHED_TOKENS_BELOW_MODEL_LEN = ("max_num_batched_tokens ({max_num_batched_tokens}) is smaller than "
                                  "max_model_len ({max_model_len}). This effectively limits the "
                                  "maximum sequence length to max_num_batched_tokens and makes vLLM "
                                  "reject longer sequences. Please increase max_num_batched_tokens or "
                                  "decrease max_model_len.")

# bfloat16-needs-ampere
# Worker._check_if_gpu_supports_dtype (worker/worker.py 0.8.5:547, v1/worker/gpu_worker.py),
# CudaPlatform.check_if_supports_dtype (platforms/cuda.py 0.33.0:651).
BFLOAT16_NEEDS_AMPERE = ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
                         "Your {gpu} GPU has compute capability {cc}. You can use float16 instead by "
                         "explicitly setting the `dtype` flag in CLI, for example: --dtype=half.")
# _resolve_auto_dtype (config.py 0.9.2+), a warning.
BFLOAT16_AUTO_FALLBACK = ("Your device '{gpu}' (with compute capability {cc}) doesn't support "
                          "torch.bfloat16. Falling back to torch.float16 for compatibility.")

# capture-settings-exclusive
# engine/arg_utils.py::create_engine_config and config/vllm.py::_set_cudagraph_sizes (0.12.0).
CAPTURE_SIZES_EXCLUSIVE = "{flag} and compilation_config.cudagraph_capture_sizes are mutually exclusive"
CAPTURE_MAX_EXCLUSIVE = ("max_cudagraph_capture_size and "
                         "compilation_config.max_cudagraph_capture_size are mutually exclusive")
CAPTURE_MAX_INCONSISTENT = ("customized max_cudagraph_capture_size(={max_cudagraph_capture_size}) "
                            "should be consistent with the max value of "
                            "cudagraph_capture_sizes(={max_size})")
CAPTURE_SIZES_EMPTY = ("cudagraph_capture_sizes should contain at least one element when using cuda "
                       "graph.")

# chat-template-not-found
# entrypoints/chat_utils.py (0.6.3-0.2x), renderers/chat_utils/chat_template.py (0.3x) adds "Tried: ..."
CHAT_TEMPLATE_NOT_FOUND = ("The supplied chat template string ({value}) appears path-like, but "
                           "doesn't exist!")

# chunked-prefill-off-ignored
# engine/arg_utils.py::_set_default_chunked_prefill_and_prefix_caching_args (0.12.0; 0.33.0 too).
CHUNKED_PREFILL_OFF_UNSUPPORTED = ("This model does not officially support disabling chunked prefill. "
                                   "Disabling this manually may cause the engine to crash or produce "
                                   "incorrect outputs.")

# chunked-prefill-with-pooling-model
CHUNKED_PREFILL_WITH_POOLING = "Chunked prefill is not supported for pooling models"

# cuda-graph-sizes-meaning-changed
# engine/arg_utils.py::create_engine_config, 0.12.0.
CUDA_GRAPH_SIZES_DEPRECATED = ("--cuda-graph-sizes is deprecated and will be removed in v0.13.0 or "
                               "v1.0.0, whichever is soonest. Please use --cudagraph-capture-sizes "
                               "instead.")

# cuda-graphs-hang-on-corex
# What a CoreX start-up logs before it stops making progress (seen in CoreX field logs).
COREX_GRAPH_CAPTURE_HANG = "Waiting for pending NCCL work to finish before starting graph capture"

# custom-allreduce-off
# CustomAllreduce.__init__ (distributed/device_communicators/custom_all_reduce.py, 0.6.3-0.33).
CUSTOM_ALLREDUCE_WORLD_SIZE = ("Custom allreduce is disabled due to an unsupported world size: {tp}. "
                               "Supported world sizes: {sizes}. To silence this warning, specify "
                               "disable_custom_all_reduce=True explicitly.")

# expert-parallel-without-experts
EXPERT_PARALLEL_WITHOUT_EXPERTS = ("Number of experts in the model must be greater than 0 when expert "
                                   "parallelism is enabled.")

# flashinfer-not-installed
# ModelConfig.__post_init__ (vllm/config.py 0.8.5-0.10.0, config/__init__.py 0.10.x,
# config/model.py 0.11-0.12); it compares the value with "FLASHINFER" only.
FLASHINFER_MISSING_MODEL_CONFIG = ("VLLM_ATTENTION_BACKEND is set to FLASHINFER, but flashinfer "
                                   "module was not found. See "
                                   "https://github.com/vllm-project/vllm/blob/main/docker/Dockerfile "
                                   "for instructions on how to install it.")
# 0.6.3/0.7.3 attention/backends/flashinfer.py sets its wrapper classes to None when the import
# fails; the worker then calls one (Python's own message).
FLASHINFER_MISSING_NONE_CALL = "TypeError: 'NoneType' object is not callable"
# The V1 FlashInfer backends (v1/attention/backends/flashinfer.py, mla/flashinfer_mla.py) import
# flashinfer at module level.
FLASHINFER_MISSING_IMPORT = "ModuleNotFoundError: No module named 'flashinfer'"

# float16-refused-by-model
# _check_valid_dtype (config/__init__.py 0.10.1.1:2684, config/model.py 0.33.0:2413)
FLOAT16_REFUSED_BY_MODEL = "The model type {model_type!r} does not support float16. Reason: {reason}"

# generate-runner-on-pooling-model
GENERATE_RUNNER_UNSUPPORTED = "This model does not support `--runner generate`."
GENERATE_TASK_UNSUPPORTED = ("This model does not support the 'generate' task. Supported tasks: <the "
                             "model's pooling tasks>")
GENERATE_RUNNER_ON_EMBEDDING = ("Embedding models do not support `--runner generate`. Use `--runner "
                                "pooling` or `--runner auto` for embedding models.")

# gpu-memory-held-by-others
GPU_MEMORY_HELD_BY_OTHERS = ("Free memory on device ({free}/{total} GiB) on startup is less than "
                             "desired GPU memory utilization ({util}, {wanted} GiB). Decrease GPU "
                             "memory utilization or reduce GPU memory used by other processes.")

# heads-not-divisible-by-tp
HEADS_NOT_DIVISIBLE_BY_TP = ("Total number of attention heads ({heads}) must be divisible by tensor "
                             "parallel size ({tp}).")

# kv-cache-dtype-mismatch
# config/vllm.py VllmConfig._reject_mismatched_float_kv_cache (0.33)
KV_CACHE_DTYPE_MISMATCH = ('kv_cache_dtype="{kv}" is incompatible with dtype="{dtype}". Please set '
                           "`--kv-cache-dtype` to {allowed}.")

# kv-cache-too-small
# vllm/worker/worker.py raise_if_cache_size_invalid (0.8.5), the V0 engine.
KV_CACHE_TOO_SMALL_V0 = ("The model's max seq len ({max_model_len}) is larger than the maximum number "
                         "of tokens that can be stored in KV cache ({tokens}). Try increasing "
                         "`gpu_memory_utilization` or decreasing `max_model_len` when initializing "
                         "the engine.")
# vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory (0.8.5; kv_cache_planning.py in 0.33.0):
# the sentence every V1 release starts with; the advice after it changes between releases.
KV_CACHE_TOO_SMALL_V1 = ("To serve at least one request with the {owner} max seq len "
                         "({max_model_len}), ({needed} GiB KV cache is needed, which is larger than "
                         "the available KV cache memory ({available} GiB).")
NO_MEMORY_FOR_CACHE_BLOCKS = "No available memory for the cache blocks."

# mamba-blocks-below-max-seqs
# config/compilation.py CompilationConfig.resolve_cudagraph_mode_and_sizes (0.20.0:1436; 0.34.0 too).
MAMBA_BLOCKS_BELOW_MAX_SEQS = ("max_num_seqs ({seqs}) exceeds available Mamba cache blocks ({blocks}). Each "
                               "decode sequence requires one Mamba cache block, so CUDA graph capture cannot "
                               "proceed. Please lower max_num_seqs to at most {blocks} or increase "
                               "gpu_memory_utilization.")

# max-model-len-above-derived
# The sentence every release raises with (then version-specific advice follows).
MAX_MODEL_LEN_ABOVE_DERIVED = ("User-specified max_model_len ({user}) is greater than the derived "
                               "max_model_len ({key}={derived} or model_max_length={model_max_length} "
                               "in model's config.json).")

# mla-unsupported-on-gpu, attention-sinks-unsupported: the CUDA attention backend selection
# Triton MLA's _forward_decode (attention/backends/triton_mla.py:707 0.7.3;
# v1/attention/backends/mla/triton_mla.py:136 0.11.0, still there in 0.17.0).
FP8_TRITON_MLA = "FP8 Triton MLA not yet supported"
# CudaPlatform.get_attn_backend_cls (platforms/cuda.py:360,399 0.12.0; :444 0.33.0).
NO_VALID_ATTENTION_BACKEND = "No valid attention backend found for cuda with {config}. Reasons: {reasons}."
SELECTED_BACKEND_INVALID = ("Selected backend AttentionBackendEnum.{name} is not valid for this configuration. "
                            "Reason: {reasons}")

# FlashAttentionImpl.__init__ (v1/attention/backends/flash_attn.py:425 0.10.1.1, :417 0.11.0).
SINKS_NEED_FA3 = "Sinks are only supported in FlashAttention 3"

# mistral-config-not-found
MISTRAL_CONFIG_NOT_FOUND = ("Failed to load mistral 'params.json' config for model {model}. Please "
                            "check if the model is a mistral-format model and if the config file "
                            "exists.")

# model-option-on-serve
MODEL_OPTION_ON_SERVE = ("With `vllm serve`, you should provide the model as a positional argument or "
                         "in a config file instead of via the `--model` option.")

# multimodal-limit-on-text-model
MULTIMODAL_LIMIT_ON_TEXT_MODEL = "`limit_mm_per_prompt` is only supported for multimodal models."

# multistep-falls-back-to-v0
# engine/arg_utils.py::_raise_or_fallback (0.8.5-0.10.0), feature "--num-scheduler-steps".
MULTISTEP_FALLS_BACK = ("--num-scheduler-steps is not supported by the V1 Engine. Falling back to V0. "
                        "We recommend to remove --num-scheduler-steps from your config in favor of "
                        "the V1 Engine.")
MULTISTEP_FORCED_V1 = "VLLM_USE_V1=1 is not supported with --num-scheduler-steps."
# platforms/cuda.py::check_and_update_config, 0.7.3 (0.8.5 says "vLLM V1", but the oracle raises first).
MULTISTEP_FORCED_V1_073 = ("Multi-step scheduling is not supported (and not needed) on VLLM V1. "
                           "Please launch without --num-scheduler-steps.")

# partial-prefills-need-chunked-prefill
PARTIAL_PREFILLS_NEED_CHUNKED_PREFILL = ("Chunked prefill must be enabled to set "
                                         "max_num_partial_prefills > 1.")

# pipeline-parallel-unsupported-model
PIPELINE_PARALLEL_UNSUPPORTED = ("Pipeline parallelism is not supported for this model. Supported "
                                 "models implement the `SupportsPP` interface.")

# prefix-caching-with-sliding-window
PREFIX_CACHING_WITH_SLIDING_WINDOW = ("Prefix caching is not supported with sliding window. Run with "
                                      "--disable-sliding-window to use prefix caching.")

# prefix-hash-sha256-on-v0
PREFIX_HASH_SHA256_ON_V0 = ("sha256 is not supported for prefix caching in V0 engine. Please use "
                            "'builtin'.")

# quantization-config-not-found
# model_executor/model_loader/weight_utils.py get_quant_config (0.6.3-0.33)
QUANTIZATION_CONFIG_NOT_FOUND = "Cannot find the config file for {method}"

# quantization-kernel-not-installed
# GPTQBitBLASConfig.__init__ and BitBLASConfig.__init__ (model_executor/layers/quantization/
# gptq_bitblas.py, bitblas.py, 0.8.5-0.15): the missing "import" space is vLLM's.
QUANTIZATION_KERNEL_NOT_INSTALLED = ("Trying to use the {package} backend, but could not importwith "
                                     "the following error: No module named '{package}'. Please "
                                     "install {package} through the following command: `pip install "
                                     "{package}>={version}`")

# ray-executor-without-ray
RAY_NOT_INSTALLED = "Failed to import Ray, please install Ray with `pip install ray`."

# remote-code-needs-trust
REMOTE_CODE_NEEDS_TRUST = ("Failed to load the model config. If the model is a custom model not yet "
                           "available in the HuggingFace transformers library, consider setting "
                           "`trust_remote_code=True` in LLM or using the `--trust-remote-code` flag "
                           "in the CLI.")
# transformers 4.52+ (dynamic_module_utils.py resolve_trust_remote_code), passed on by vLLM as is.
TRANSFORMERS_REMOTE_CODE = ("The repository {model} contains custom code which must be executed to "
                            "correctly load the model. ... Please pass the argument "
                            "`trust_remote_code=True` to allow custom code to be run.")

# sliding-window-off-with-rope-scaling
SLIDING_WINDOW_OFF_WITH_ROPE_SCALING = ("Disabling sliding window is not supported for models with "
                                        "rope_scaling. Please raise an issue so we can investigate.")

# swap-space-exceeds-host-memory
# CacheConfig.verify_with_parallel_config (vllm/config.py 0.6.3-0.10.0, config/cache.py 0.10.1-0.15).
SWAP_SPACE_TOO_LARGE = ("Too large swap space. {usage} GiB out of the {total} GiB total CPU memory is "
                        "allocated for the swap space.")
SWAP_SPACE_POSSIBLY_TOO_LARGE = ("Possibly too large swap space. {usage} GiB out of the {total} GiB "
                                 "total CPU memory is allocated for the swap space.")

# tokenizer-not-found
TOKENIZER_REPO_ID_INVALID = ("Repo id must be in the form 'repo_name' or 'namespace/repo_name': "
                             "'{value}'. Use `repo_type` argument if needed.")
TOKENIZER_NOT_CACHED = ("LocalEntryNotFoundError: Cannot find an appropriate cached snapshot folder "
                        "for the specified revision on the local disk and outgoing traffic has been "
                        "disabled.")

# tracing-without-opentelemetry
OPENTELEMETRY_MISSING = ("OpenTelemetry is not available. Unable to configure 'otlp_traces_endpoint'. "
                         "Ensure OpenTelemetry packages are installed.")

# unknown-attention-backend
UNKNOWN_BACKEND_063 = ("Invalid attention backend '{backend_name}'. Available backends: {backends} "
                       "(case-sensitive).")
UNKNOWN_BACKEND_SELECTOR = ("Invalid attention backend: '{backend_by_env_var}'. "
                            "Valid backends are: {backends}")
UNKNOWN_BACKEND_ENVS = ("Invalid value '{value}' for VLLM_ATTENTION_BACKEND. Valid options: "
                        "{actual_choices}.")
BACKEND_FALLS_BACK_TO_V0 = ("VLLM_ATTENTION_BACKEND={x} is not supported by the V1 Engine. Falling "
                            "back to V0. We recommend to remove VLLM_ATTENTION_BACKEND={x} from your "
                            "config in favor of the V1 Engine.")
BACKEND_FORCED_V1 = "VLLM_USE_V1=1 is not supported with VLLM_ATTENTION_BACKEND={x}."
# v1/attention/backends/registry.py _AttentionBackendEnumMeta.__getitem__ (0.15+)
UNKNOWN_BACKEND_FLAG = "Unknown attention backend: '{name}'. Valid options are: {backends}"

# unknown-executor-backend
# utils/import_utils.py resolve_obj_by_qualname: `module_name, obj_name = qualname.rsplit(".", 1)`
EXECUTOR_BACKEND_UNPACK = "not enough values to unpack (expected 2, got 1)"

# unknown-quantization-method
# ModelConfig._verify_quantization (vllm/config.py 0.9-0.10, vllm/config/model.py 0.11+)
UNKNOWN_QUANTIZATION_METHOD = "Unknown quantization method: {name}. Must be one of {names}."
DEPRECATED_QUANTIZATION_METHOD = ("The quantization method %s is deprecated and will be removed in "
                                  "future versions of vLLM. To bypass, set "
                                  "`--allow-deprecated-quantization`.")

# world-size-exceeds-gpus
RAY_NEEDED_FOR_MULTI_NODE = ("Unable to load Ray which is required for multi-node inference, please "
                             "install Ray with `pip install ray`.")

# Fragments of the messages of config-class checks (read from the copy as programs) that a rule
# words better than config-check-refuses' quote: each rule's `explains` names its own.
# batched-tokens-below-model-len, batched-tokens-below-max-seqs
BATCHED_TOKENS_CHECK = "max_num_batched_tokens"
# expert-parallel-without-experts
EXPERTS_NEEDED_CHECK = "Number of experts in the model must be"
# feature-falls-back-to-v0
V1_UNSUPPORTED_CHECK = "is not supported by the V1 Engine"
# feature-refused-by-v1
V1_FORCED_CHECK = "VLLM_USE_V1=1 is not supported"
# flag-needs-companion
TOOL_PARSER_NEEDED_CHECK = "requires --tool-call-parser"
REASONING_PARSER_NEEDED_CHECK = "requires --reasoning-parser"
LOG_REQUESTS_NEEDED_CHECK = "requires --enable-log-requests"
PROMPT_ADAPTER_TOKENS_CHECK = "max_prompt_adapter_token must be set"
EXCLUSIVE_FLAGS_CHECK = "cannot be enabled at the same time"
# heads-not-divisible-by-tp
HEADS_DIVISIBLE_CHECK = "Total number of attention heads"
# invalid-flag-value
KV_CACHE_DTYPE_CHECK = "Unknown kv cache dtype"
PREFIX_HASH_CHECK = "Unknown prefix caching hash"
# model-option-on-serve
MODEL_OPTION_CHECK = "With `vllm serve`, you should provide"
# partial-prefills-need-chunked-prefill
CHUNKED_PREFILL_NEEDED_CHECK = "Chunked prefill must be enabled"
# pipeline-parallel-unsupported-model
PIPELINE_PARALLEL_CHECK = "Pipeline parallelism is not supported"
# ray-executor-without-ray
RAY_NEEDED_CHECK = "Unable to load Ray"
# swap-space-exceeds-host-memory
SWAP_SPACE_CHECK = "Too large swap space"
# tracing-without-opentelemetry
OPENTELEMETRY_CHECK = "OpenTelemetry is not available"
# unknown-executor-backend
EXECUTOR_BACKEND_CHECK = "Unrecognized distributed executor"
# unknown-parser-name
TOOL_PARSER_CHECK = "invalid tool call parser"
REASONING_PARSER_CHECK = "invalid reasoning parser"
# value-out-of-range (with the guards the facts' value_ranges hold)
GPU_MEMORY_UTILIZATION_CHECK = "GPU memory utilization must be"
CPU_OFFLOAD_CHECK = "CPU offload space must be non-negative"
LOOKAHEAD_SLOTS_CHECK = "num_lookahead_slots"
LONG_PREFILL_CHECK = "long_prefill_token_threshold"
SCHEDULER_STEPS_CHECK = "num_scheduler_steps"
API_SERVER_COUNT_CHECK = "api_server_count"
HEADLESS_CHECK = "cannot be used with --headless"
