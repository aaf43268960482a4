"""The rule catalogue: explicit imports, ALL_RULES sorted by code (a test checks the order)."""

from patchops.lint.rules.abbreviated_flag import AbbreviatedFlag
from patchops.lint.rules.architecture_removed import ArchitectureRemoved
from patchops.lint.rules.async_scheduling_speculative_method import AsyncSchedulingSpeculativeMethod
from patchops.lint.rules.attention_backend_env_removed import AttentionBackendEnvRemoved
from patchops.lint.rules.bfloat16_needs_ampere import Bfloat16NeedsAmpere
from patchops.lint.rules.batched_tokens_below_max_seqs import BatchedTokensBelowMaxSeqs
from patchops.lint.rules.batched_tokens_below_model_len import BatchedTokensBelowModelLen
from patchops.lint.rules.capture_settings_exclusive import CaptureSettingsExclusive
from patchops.lint.rules.capture_settings_moot_with_eager import CaptureSettingsMootWithEager
from patchops.lint.rules.chat_template_not_found import ChatTemplateNotFound
from patchops.lint.rules.chunked_prefill_off_ignored import ChunkedPrefillOffIgnored
from patchops.lint.rules.chunked_prefill_with_pooling_model import ChunkedPrefillWithPoolingModel
from patchops.lint.rules.concurrency_above_max_seqs import ConcurrencyAboveMaxSeqs
from patchops.lint.rules.concurrency_without_cuda_graphs import ConcurrencyWithoutCudaGraphs
from patchops.lint.rules.cuda_graph_sizes_meaning_changed import CudaGraphSizesMeaningChanged
from patchops.lint.rules.cuda_graphs_hang_on_corex import CudaGraphsHangOnCorex
from patchops.lint.rules.custom_allreduce_off import CustomAllreduceOff
from patchops.lint.rules.duplicate_key import DuplicateKey
from patchops.lint.rules.expert_parallel_without_experts import ExpertParallelWithoutExperts
from patchops.lint.rules.facts_of_another_release import FactsOfAnotherRelease
from patchops.lint.rules.feature_falls_back_to_v0 import FeatureFallsBackToV0
from patchops.lint.rules.feature_refused_by_v1 import FeatureRefusedByV1
from patchops.lint.rules.flag_hardcoded_by_fork import FlagHardcodedByFork
from patchops.lint.rules.float16_refused_by_model import Float16RefusedByModel
from patchops.lint.rules.flashinfer_not_installed import FlashinferNotInstalled
from patchops.lint.rules.generate_runner_on_pooling_model import GenerateRunnerOnPoolingModel
from patchops.lint.rules.gpu_memory_held_by_others import GpuMemoryHeldByOthers
from patchops.lint.rules.heads_not_divisible_by_tp import HeadsNotDivisibleByTp
from patchops.lint.rules.quantized_shard_breaks_kernel_tile import QuantizedShardBreaksKernelTile
from patchops.lint.rules.mla_unsupported_on_gpu import MlaUnsupportedOnGpu
from patchops.lint.rules.attention_sinks_unsupported import AttentionSinksUnsupported
from patchops.lint.rules.input_not_linted import InputNotLinted
from patchops.lint.rules.invalid_flag_value import InvalidFlagValue
from patchops.lint.rules.config_check_refuses import ConfigCheckRefuses
from patchops.lint.rules.kv_cache_dtype_mismatch import KvCacheDtypeMismatch
from patchops.lint.rules.kv_cache_too_small import KvCacheTooSmall
from patchops.lint.rules.lora_unsupported_model import LoraUnsupportedModel
from patchops.lint.rules.mamba_blocks_below_max_seqs import MambaBlocksBelowMaxSeqs
from patchops.lint.rules.max_model_len_above_derived import MaxModelLenAboveDerived
from patchops.lint.rules.mistral_config_not_found import MistralConfigNotFound
from patchops.lint.rules.model_config_contradicts_model import ModelConfigContradictsModel
from patchops.lint.rules.model_option_on_serve import ModelOptionOnServe
from patchops.lint.rules.model_type_unknown_to_transformers import ModelTypeUnknownToTransformers
from patchops.lint.rules.multimodal_limit_on_text_model import MultimodalLimitOnTextModel
from patchops.lint.rules.multistep_chunked_prefill_with_pp import MultistepChunkedPrefillWithPp
from patchops.lint.rules.multistep_falls_back_to_v0 import MultistepFallsBackToV0
from patchops.lint.rules.multistep_needs_flash_backend import MultistepNeedsFlashBackend
from patchops.lint.rules.multistep_removed import MultistepRemoved
from patchops.lint.rules.multistep_with_spec_decode import MultistepWithSpecDecode
from patchops.lint.rules.nested_config_invalid import NestedConfigInvalid
from patchops.lint.rules.partial_prefills_need_chunked_prefill import PartialPrefillsNeedChunkedPrefill
from patchops.lint.rules.pipeline_parallel_unsupported_model import PipelineParallelUnsupportedModel
from patchops.lint.rules.flag_needs_companion import FlagNeedsCompanion
from patchops.lint.rules.parser_plugin_not_found import ParserPluginNotFound
from patchops.lint.rules.prefix_caching_with_sliding_window import PrefixCachingWithSlidingWindow
from patchops.lint.rules.prefix_hash_sha256_on_v0 import PrefixHashSha256OnV0
from patchops.lint.rules.quantization_config_not_found import QuantizationConfigNotFound
from patchops.lint.rules.quantization_kernel_not_installed import QuantizationKernelNotInstalled
from patchops.lint.rules.quantization_unsupported_here import QuantizationUnsupportedHere
from patchops.lint.rules.reasoning_budget_too_small import ReasoningBudgetTooSmall
from patchops.lint.rules.remote_code_needs_trust import RemoteCodeNeedsTrust
from patchops.lint.rules.request_longer_than_model_len import RequestLongerThanModelLen
from patchops.lint.rules.ray_executor_without_ray import RayExecutorWithoutRay
from patchops.lint.rules.sliding_window_off_with_rope_scaling import SlidingWindowOffWithRopeScaling
from patchops.lint.rules.spec_decode_batch_above_capture import SpecDecodeBatchAboveCapture
from patchops.lint.rules.spec_decode_with_tool_calls import SpecDecodeWithToolCalls
from patchops.lint.rules.spec_version_mismatch import SpecVersionMismatch
from patchops.lint.rules.speculative_config_invalid import SpeculativeConfigInvalid
from patchops.lint.rules.swap_space_exceeds_host_memory import SwapSpaceExceedsHostMemory
from patchops.lint.rules.tokenizer_not_found import TokenizerNotFound
from patchops.lint.rules.unknown_attention_backend import UnknownAttentionBackend
from patchops.lint.rules.unknown_executor_backend import UnknownExecutorBackend
from patchops.lint.rules.tracing_without_opentelemetry import TracingWithoutOpentelemetry
from patchops.lint.rules.unknown_flag import UnknownFlag
from patchops.lint.rules.unknown_parser_name import UnknownParserName
from patchops.lint.rules.unknown_quantization_method import UnknownQuantizationMethod
from patchops.lint.rules.unused_suppression import UnusedSuppression
from patchops.lint.rules.vision_heads_not_divisible_by_tp import VisionHeadsNotDivisibleByTp
from patchops.lint.rules.world_size_exceeds_gpus import WorldSizeExceedsGpus
from patchops.lint.rules.value_out_of_range import ValueOutOfRange
from patchops.lint.rules.yaml_11_boolean import Yaml11Boolean
from patchops.lint.rules.yaml_collection_mangled import YamlCollectionMangled
from patchops.lint.rules.yaml_false_dropped import YamlFalseDropped
from patchops.lint.rules.yaml_true_breaks_store_true import YamlTrueBreaksStoreTrue

ALL_RULES = (
    UnusedSuppression,
    SpecVersionMismatch,
    InputNotLinted,
    ModelConfigContradictsModel,
    FactsOfAnotherRelease,
    UnknownFlag,
    YamlFalseDropped,
    Yaml11Boolean,
    DuplicateKey,
    YamlCollectionMangled,
    YamlTrueBreaksStoreTrue,
    InvalidFlagValue,
    AbbreviatedFlag,
    ModelOptionOnServe,
    ValueOutOfRange,
    NestedConfigInvalid,
    ConfigCheckRefuses,
    BatchedTokensBelowModelLen,
    BatchedTokensBelowMaxSeqs,
    ChunkedPrefillOffIgnored,
    ConcurrencyAboveMaxSeqs,
    PartialPrefillsNeedChunkedPrefill,
    ChunkedPrefillWithPoolingModel,
    MaxModelLenAboveDerived,
    RequestLongerThanModelLen,
    MultistepRemoved,
    MultistepFallsBackToV0,
    MultistepNeedsFlashBackend,
    MultistepWithSpecDecode,
    MultistepChunkedPrefillWithPp,
    FeatureFallsBackToV0,
    FeatureRefusedByV1,
    PrefixHashSha256OnV0,
    ArchitectureRemoved,
    PipelineParallelUnsupportedModel,
    ModelTypeUnknownToTransformers,
    GenerateRunnerOnPoolingModel,
    RemoteCodeNeedsTrust,
    LoraUnsupportedModel,
    MultimodalLimitOnTextModel,
    SlidingWindowOffWithRopeScaling,
    MistralConfigNotFound,
    SpeculativeConfigInvalid,
    AsyncSchedulingSpeculativeMethod,
    ConcurrencyWithoutCudaGraphs,
    CaptureSettingsMootWithEager,
    CudaGraphSizesMeaningChanged,
    CaptureSettingsExclusive,
    SpecDecodeBatchAboveCapture,
    UnknownAttentionBackend,
    FlashinferNotInstalled,
    AttentionBackendEnvRemoved,
    MlaUnsupportedOnGpu,
    AttentionSinksUnsupported,
    CustomAllreduceOff,
    Bfloat16NeedsAmpere,
    Float16RefusedByModel,
    KvCacheDtypeMismatch,
    FlagHardcodedByFork,
    CudaGraphsHangOnCorex,
    PrefixCachingWithSlidingWindow,
    KvCacheTooSmall,
    SwapSpaceExceedsHostMemory,
    GpuMemoryHeldByOthers,
    MambaBlocksBelowMaxSeqs,
    HeadsNotDivisibleByTp,
    WorldSizeExceedsGpus,
    RayExecutorWithoutRay,
    ExpertParallelWithoutExperts,
    UnknownExecutorBackend,
    VisionHeadsNotDivisibleByTp,
    QuantizedShardBreaksKernelTile,
    UnknownQuantizationMethod,
    QuantizationConfigNotFound,
    QuantizationUnsupportedHere,
    QuantizationKernelNotInstalled,
    UnknownParserName,
    FlagNeedsCompanion,
    ReasoningBudgetTooSmall,
    ChatTemplateNotFound,
    SpecDecodeWithToolCalls,
    ParserPluginNotFound,
    TokenizerNotFound,
    TracingWithoutOpentelemetry,
)
