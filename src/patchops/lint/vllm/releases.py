"""vLLM releases: one version type, one tolerant parser, and every boundary patchops knows.

A boundary is the first release where a behaviour changed, named for what changed, with the
source line in that release's wheel (PyPI, extracted under ~/.cache/patchops/trees) that
proves it. Releases between two shipped ones were not read: a boundary is "first seen" in the
release named, and 0.8.0-0.8.4 are taken to behave like the next shipped release unless said.
Nothing else in patchops compares a vLLM version against a literal (a test checks).

Vendor builds report versions PEP 440 cannot read (`0.8.5-corex.4.2`, `dev`): `release()`
reads the release part, and an unreadable version is taken as the newest.
"""

from __future__ import annotations

import operator
import re
from typing import TYPE_CHECKING, Any, Optional, Union

from packaging.version import InvalidVersion, Version

if TYPE_CHECKING:  # packaging.specifiers costs a lint more than every rule's range check
    from packaging.specifiers import SpecifierSet

__all__ = ["Version", "Boundary", "NEWEST", "parse_release", "parse_version", "release", "in_range"]

_RELEASE_RE = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")
NEWEST = Version("999")  # an unreadable version (a source build's "dev") is taken as the newest


class Boundary(Version):
    """A release where `change` first holds, compared like the Version it is."""

    def __init__(self, version: str, change: str, source: str) -> None:
        super().__init__(version)
        self.change = change
        self.source = source  # "vllm/<file>:<line> (<release read>)"


# --------------------------------------------------------------------------- the parser


def parse_release(version: Optional[str]) -> Optional[Version]:
    """Return the release part ("0.6.3.post1" -> 0.6.3, "0.8.5-corex.4.2" -> 0.8.5), None if unreadable."""
    if not version:
        return None
    try:
        return Version(Version(version).base_version)
    except InvalidVersion:
        match = _RELEASE_RE.match(version)
        return Version(match.group(1)) if match else None


def parse_version(version: Optional[str]) -> Optional[Version]:
    """Return `version` as PEP 440 reads it (pre-releases kept), else its release part, else None."""
    try:
        return Version(version) if version else None
    except InvalidVersion:
        return parse_release(version)


def release(version: Any) -> Version:
    """Return the release part of a version string or of anything with `.version` (Facts).

    Every entry point goes through here: `--vllm-version`, the spec's `vllm.version`, an
    installed copy's `_version.py`. An unreadable version ("dev") is NEWEST.
    """
    if version is not None and not isinstance(version, str):
        version = getattr(version, "version", None)
    return parse_release(version) or NEWEST


def micro(version: Version) -> Version:
    """Return major.minor.micro of `version` (0.10.1.1 -> 0.10.1): hotfixes share their facts."""
    parts = tuple(version.release) + (0, 0, 0)
    return Version(".".join(str(p) for p in parts[:3]))


_CLAUSE_RE = re.compile(r"^\s*(>=|<=|==|!=|<|>)\s*(\d+(?:\.\d+)*)\s*$")
_PREFIX_RE = re.compile(r"^\s*(==|!=)\s*(\d+(?:\.\d+)*)\.\*\s*$")   # ==0.11.* / !=0.11.*
_COMPARE = {">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
            "<": operator.lt, ">": operator.gt}


def in_range(version: Optional[str], spec: Union[str, "SpecifierSet"]) -> bool:
    """Say whether `version`'s release is inside a PEP 440 range (an unreadable one is the newest).

    The release part has no pre, post or local segment, so against plain release clauses
    (`>=0.7.3,<0.10.1`, every rule's range) PEP 440's ordered comparisons are Version's own;
    any other spelling goes to packaging's SpecifierSet.
    """
    text = str(spec)
    clauses = [_CLAUSE_RE.match(clause) or _PREFIX_RE.match(clause) for clause in text.split(",") if clause.strip()]
    candidate = release(version)
    if all(clauses):
        return all(_holds(m, candidate) for m in clauses)  # type: ignore[arg-type]
    from packaging.specifiers import SpecifierSet

    return SpecifierSet(text).contains(candidate, prereleases=True)


def _holds(clause: "re.Match[str]", candidate: Version) -> bool:
    """Say whether a release-only `candidate` meets one plain clause (`<0.11`, `!=0.11.*`)."""
    bound = Version(clause.group(2))
    if clause.re is _PREFIX_RE:  # PEP 440 prefix match: the candidate's release, zero-padded
        prefix = bound.release
        same = (tuple(candidate.release) + (0,) * len(prefix))[:len(prefix)] == prefix
        return same if clause.group(1) == "==" else not same
    return _COMPARE[clause.group(1)](candidate, bound)


# --------------------------------------------------------------------------- engine


V1_ENGINE = Boundary("0.7", "the V1 engine exists, opt-in with VLLM_USE_V1=1",
                     "vllm/envs.py:504 (0.7.3), default \"0\"; 0.6.3 has no VLLM_USE_V1")
V1_DEFAULT = Boundary("0.8", "V1 is the default engine (VLLM_USE_V1 defaults to 1)",
                      "vllm/envs.py:531 (0.8.5)")
V1_ORACLE = Boundary("0.8.5", "EngineArgs._is_v1_supported_oracle sends unsupported configs to V0",
                     "vllm/engine/arg_utils.py:1292 (0.8.5)")
V0_REMOVED = Boundary("0.11", "V0 is gone: a fallback to it crashes the API server",
                      "vllm/entrypoints/openai/api_server.py:209 (0.11.0) `assert envs.VLLM_USE_V1`")
V1_CONFIG_WITHOUT_V0 = Boundary("0.11", "with V0 chosen (VLLM_USE_V1=0 or a fallback) the configuration is still "
                                "built with V1's defaults and checks; only then does the API server stop",
                                "vllm/engine/arg_utils.py:1162 (0.11.0) `self._set_default_args(...)` whatever "
                                "use_v1; vllm/entrypoints/openai/api_server.py:206-209 (0.11.0) "
                                "create_engine_config, then `assert envs.VLLM_USE_V1`")
V1_ONLY = Boundary("0.12", "no V1 oracle and no VLLM_USE_V1: only the V1 engine",
                   "vllm/engine/arg_utils.py (0.12.0) has no _is_v1_supported_oracle")
SPECULATIVE_CONFIG = Boundary("0.8.3", "speculative decoding is one speculative_config dict "
                              "(speculative_model and friends are gone)",
                              "vllm/engine/arg_utils.py:314 (0.8.5); no --speculative-model from 0.8.3 on "
                              "(shipped facts; 0.8.2 has both); :176 speculative_model (0.7.3)")
# SpeculativeConfig.__post_init__ (vllm/config.py to 0.10.x, then vllm/config/speculative.py): which
# methods need no draft model, which take the n-gram window, which targets draft themselves.
SPEC_MIMO_TARGET = Boundary("0.9", "a mimo target drafts itself, as deepseek_v3 does (0.8.5: deepseek_v3 only)",
                            "vllm/config.py:2439 (0.9.0)")
SPEC_MORE_TARGETS = Boundary("0.10.2", "ernie4_5_moe and qwen3_next targets draft themselves too",
                             "vllm/config/__init__.py:2054 (0.10.2)")
SPEC_MTP_BY_METHOD = Boundary("0.11", "method mtp (or a *_mtp alias) drafts from the target; the target's "
                              "model_type no longer does", "vllm/config/speculative.py:213 (0.11.0)")
SPEC_NO_MODEL_WORDING = Boundary("0.11", "\"num_speculative_tokens was provided but without speculative model.\"",
                                 "vllm/config/speculative.py:238 (0.11.0)")
SPEC_SUFFIX = Boundary("0.11.1", "method suffix needs no draft model", "vllm/config/speculative.py:264 (0.11.1)")
SPEC_EXTRACT_HIDDEN_STATES = Boundary("0.17", "method extract_hidden_states needs no draft model",
                                      "vllm/config/speculative.py:370 (0.17.0)")
SPEC_NGRAM_GPU = Boundary("0.18", "method ngram_gpu needs no draft model and takes the n-gram window",
                          "vllm/config/speculative.py:377 (0.18.0); absent in 0.17.1")
SPEC_CUSTOM_CLASS = Boundary("0.22", "method custom_class without a model (its class path) is refused",
                             "vllm/config/speculative.py:574 (0.22.0)")
SPEC_DSPARK = Boundary("0.25", "method dspark drafts from the target", "vllm/config/speculative.py:672 (0.25.0)")

# The oracle's checks, by the release that changed them (engine/arg_utils.py
# _is_v1_supported_oracle; 0.8.5:1292, 0.9.2, 0.10.0, 0.10.1.1, 0.10.2, 0.11.0).
ORACLE_TENSORIZER_OK = Boundary("0.9", "--load-format tensorizer no longer falls back (sharded_state still does)",
                                "vllm/engine/arg_utils.py:1312 (0.9.2); :1298 (0.8.5)")
ORACLE_POLICY_OK = Boundary("0.9", "--scheduling-policy no longer falls back",
                            "vllm/engine/arg_utils.py:1322 (0.8.5); absent in 0.9.2")
ORACLE_GUIDED_EXACT = Boundary("0.9", "--guided-decoding-backend is matched whole, not before ':'",
                               "vllm/engine/arg_utils.py:1345 (0.9.2); :1338 split(':') (0.8.5)")
ORACLE_OUTLINES_OK = Boundary("0.10", "guided decoding backend outlines is accepted by V1",
                              "vllm/engine/arg_utils.py:1335 (0.10.0)")
ORACLE_ROCM_KV_OK = Boundary("0.9", "on ROCm any --kv-cache-dtype passes the oracle",
                             "vllm/engine/arg_utils.py:1373 (0.9.2)")
ORACLE_KV_BY_PLATFORM = Boundary("0.10", "the platform decides --kv-cache-dtype (fp8 also on Blackwell)",
                                 "vllm/engine/arg_utils.py:1356 (0.10.0) is_kv_cache_dtype_supported")
ORACLE_PROMPT_ADAPTER_GONE = Boundary("0.10", "--enable-prompt-adapter no longer exists to fall back on",
                                      "vllm/engine/arg_utils.py:1385 (0.9.2); absent in 0.10.0")
ORACLE_PROMPT_EMBEDS = Boundary("0.9", "--enable-prompt-embeds falls back to V0",
                                "vllm/engine/arg_utils.py:1391 (0.9.2)")
ORACLE_MODEL_CHECKS_GONE = Boundary("0.9", "--dtype float32, --quantization gguf and --task no longer fall back",
                                    "vllm/engine/arg_utils.py:1383-1398 (0.8.5); absent in 0.9.2")
ORACLE_SPEC_METHODS = Boundary("0.9", "speculative methods medusa and deepseek_mtp join ngram/eagle, none experimental",
                               "vllm/engine/arg_utils.py:1430-1436 (0.9.2)")
ORACLE_SPEC_CHECK_GONE = Boundary("0.10", "speculative decoding no longer falls back (draft_model raises instead)",
                                  "vllm/engine/arg_utils.py:1396 (0.10.0)")
DRAFT_MODEL_ON_V1 = Boundary("0.15", "a separate draft model (`method: draft_model`) runs on V1, no longer refused",
                             "vllm/v1/spec_decode/draft_model.py (0.15.0); vllm/engine/arg_utils.py:1775 "
                             "_check_feature_supported refuses it (0.12.0-0.14.1)")
ORACLE_PP_MP_OK = Boundary("0.9", "pipeline parallelism may use the mp or external_launcher executor",
                           "vllm/engine/arg_utils.py:1482 (0.9.2)")
ORACLE_MULTISTEP_GONE = Boundary("0.10.1", "--num-scheduler-steps and guided decoding checks leave the oracle",
                                 "vllm/engine/arg_utils.py:1326 (0.10.0); absent in 0.10.1.1")
ORACLE_PLATFORM_DEFAULT_V1 = Boundary("0.9", "a platform other than CUDA no longer falls back to V0 as "
                                      "experimental (the platform's default_v1 decides)",
                                      "vllm/engine/arg_utils.py:1494 (0.8.5) not is_cuda(); :1493 default_v1 (0.9.2)")
ORACLE_CPU_SLIDING_WINDOW = Boundary("0.9.2", "a sliding-window model on the CPU backend falls back to V0",
                                     "vllm/engine/arg_utils.py:1499 (0.9.2); 0.9.1's oracle takes x86 CPUs "
                                     "with no sliding-window check (arg_utils.py:1443)")
ORACLE_CC_CHECK_GONE = Boundary("0.10.2", "compute capability < 8.0 and --otlp-traces-endpoint no longer fall back",
                                "vllm/engine/arg_utils.py:1403,1443 (0.10.1.1); absent in 0.10.2")

# V1_BACKENDS, the names VLLM_ATTENTION_BACKEND may take without a fallback, changed here
# (engine/arg_utils.py: 0.8.5:1445, 0.9.2:1447 == 0.10.0:1404, 0.10.1.1:1456, 0.10.2:1502, 0.11.0:1491).
ORACLE_BACKENDS_0_9 = Boundary("0.9", "V1_BACKENDS adds CUTLASS_MLA_VLLM_V1, ROCM_AITER_MLA, TORCH_SDPA_VLLM_V1, "
                               "FLEX_ATTENTION", "vllm/engine/arg_utils.py:1447 (0.9.2)")
ORACLE_BACKENDS_0_10_1 = Boundary("0.10.1", "V1_BACKENDS renames CUTLASS_MLA, adds TREE_ATTN, XFORMERS_VLLM_V1",
                                  "vllm/engine/arg_utils.py:1456 (0.10.1.1)")
ORACLE_BACKENDS_0_10_2 = Boundary("0.10.2", "V1_BACKENDS adds FLASHMLA_VLLM_V1, FLASH_ATTN_MLA, FLASHINFER_MLA",
                                  "vllm/engine/arg_utils.py:1502 (0.10.2)")
ORACLE_BACKENDS_0_11 = Boundary("0.11", "V1_BACKENDS drops the _VLLM_V1 suffixes, adds XFORMERS, ROCM_ATTN",
                                "vllm/engine/arg_utils.py:1491 (0.11.0)")

# --------------------------------------------------------------------------- scheduler


V0_BATCH_2048 = Boundary("0.7", "V0 chunked prefill defaults max_num_batched_tokens to 2048, not 512",
                         "vllm/config.py:999 (0.6.3.post1) 512; _DEFAULT_MAX_NUM_BATCHED_TOKENS (0.7.3)")
V0_CHUNKED_BLOCKERS = Boundary("0.7", "V0 keeps chunked prefill off on ROCm and for pooling models",
                               "vllm/engine/arg_utils.py create_engine_config (0.7.3)")
SEQS_DEFAULT_AT_LAUNCH = Boundary("0.7", "EngineArgs.max_num_seqs defaults to None, filled in at launch",
                                  "vllm/engine/arg_utils.py:126 (0.7.3); :115 `max_num_seqs: int = 256` (0.6.3.post1)")
V1_BATCH_BY_MEMORY = Boundary("0.8", "V1 batch defaults key on device memory (>= 70 GiB), not the device name",
                              "vllm/engine/arg_utils.py:1596 (0.8.5); :1368 h100/h200 (0.7.3)")
A100_KEEPS_SMALL = Boundary("0.9", "an A100 keeps the small V1 batch defaults despite 80 GiB",
                            "vllm/engine/arg_utils.py:1629 (0.9.2)")
SEQS_CAPPED_BY_BUDGET = Boundary("0.10.1", "an unset max_num_seqs is capped at max_num_batched_tokens",
                                 "vllm/engine/arg_utils.py _set_default_args (0.10.1.1)")
MAMBA_BLOCKS_BOUND_SEQS = Boundary("0.20", "a hybrid model refuses FULL decode CUDA graphs when max_num_seqs exceeds "
                                   "its Mamba cache blocks (0.19 capped the capture sizes with a warning)",
                                   "vllm/config/compilation.py:1436 (0.20.0) resolve_cudagraph_mode_and_sizes; "
                                   ":1285 adjust_cudagraph_sizes_for_mamba_cache (0.19.1)")
EMBEDDING_RUNNER_MESSAGE = Boundary("0.25", "`--runner generate` on a pooling-only model is refused as "
                                    "\"Embedding models do not support `--runner generate`\"",
                                    "vllm/config/model.py ModelConfig.__post_init__ (0.25.0; 0.20.0 has "
                                    "only \"This model does not support `--runner generate`.\")")
V1_POOLING = Boundary("0.10", "V1 runs pooling models: chunked prefill follows the pooling type and, "
                      "off, max_num_batched_tokens defaults to max_model_len",
                      "vllm/engine/arg_utils.py _set_default_args_v1 (0.10.1.1; the budget line is in "
                      "0.9.2, whose V1 runs no pooling model)")
CHUNKED_PREFILL_HONOURED = Boundary("0.12", "enable_chunked_prefill false is respected (with a warning)",
                                    "vllm/config/scheduler.py (0.12.0)")
PREFIX_CACHING_BY_ATTN_TYPE = Boundary("0.12", "an unset enable_prefix_caching follows the model's attention "
                                       "type: off for encoder-decoder and attention-free models",
                                       "vllm/config/model.py is_prefix_caching_supported (0.12.0)")
BUDGET_FOLLOWS_MODEL_LEN = Boundary("0.12", "an unset max_num_batched_tokens covers max_model_len with chunked "
                                    "prefill off, and at most max_num_seqs x max_model_len",
                                    "vllm/engine/arg_utils.py _set_default_args (0.12.0)")
CPU_BATCH_DEFAULTS = Boundary("0.9", "the CPU platform has its own V1 batch defaults for `vllm serve` "
                              "(max_num_batched_tokens 2048, max_num_seqs 32)",
                              "vllm/engine/arg_utils.py:1666 (0.9.2); absent in 0.8.5")
CPU_DEFAULTS_BY_WORLD_SIZE = Boundary("0.10", "CPU batch defaults scale with TP x PP: 2048 x world size tokens, "
                                      "128 x world size sequences", "vllm/engine/arg_utils.py:1622 (0.10.0)")
TPU_BATCH_BY_CHIP = Boundary("0.9", "TPU chips V6E / V5E / V5P default max_num_batched_tokens to 1024 / 512 / 256 "
                             "for `vllm serve`", "vllm/engine/arg_utils.py:1651 (0.9.2); absent in 0.8.5")
HUGE_TIER = Boundary("0.30", "GPUs with >= 160 GiB get a third tier of batch defaults; GB10 stays small",
                     "vllm/engine/arg_utils.py (0.30.0; wheel not in the local cache, read from shipped facts)")

# --------------------------------------------------------------------------- attention


BACKEND_ENUM_NAMES = Boundary("0.7", "backends report enum names (FLASH_ATTN), not 0.6.3's get_name() "
                              "spellings (flash-attn); VLLM_ATTENTION_BACKEND names V1-only backends",
                              "vllm/attention/selector.py (0.6.3.post1) which_attn_to_use; "
                              "vllm/platforms/cuda.py get_attn_backend_cls (0.7.3)")
PLATFORM_SELECTS_BACKEND = Boundary("0.7", "the platform picks the V0 backend (get_attn_backend_cls); 0.6.3's "
                                    "which_attn_to_use took any VLLM_ATTENTION_BACKEND name as given",
                                    "vllm/platforms/cuda.py get_attn_backend_cls (0.7.3)")
UNKNOWN_BACKEND_IGNORED = Boundary("0.7", "an unknown VLLM_ATTENTION_BACKEND is ignored, not a ValueError",
                                   "vllm/attention/selector.py (0.7.3); ValueError in 0.6.3.post1")
FA_FP8_KV = Boundary("0.8", "V0 flash-attention accepts an fp8 KV cache on Hopper (FA3)",
                     "vllm/platforms/cuda.py get_attn_backend_cls (0.8.5)")
FLASHINFER_CHECKED_AT_START = Boundary("0.8", "a missing flashinfer fails at startup, not on the first batch",
                                       "vllm/attention/backends/flashinfer.py (0.8.5)")
BACKEND_VALIDATED_BY_SELECTOR = Boundary("0.10.1", "an unknown VLLM_ATTENTION_BACKEND raises in the selector",
                                         "vllm/attention/selector.py (0.10.1.1) 'Invalid attention backend'")
BACKEND_VALIDATED_BY_ENVS = Boundary("0.12", "an unknown VLLM_ATTENTION_BACKEND raises when envs.py reads it",
                                     "vllm/envs.py (0.12.0) env_with_choices")
ENVIRON_VALIDATED = Boundary("0.20", "an unknown VLLM_* variable is reported (0.15.0 ignores it)",
                             "vllm/envs.py:502 environment_variables (0.20.0)")

MLA_TRITON_FP8_REFUSED = Boundary("0.7", "MLA runs on Triton MLA where no faster MLA backend takes the GPU, and Triton "
                                  "MLA refuses an fp8 KV cache", "vllm/attention/backends/triton_mla.py:707 (0.7.3)")
MLA_FLASHMLA_ON_HOPPER = Boundary("0.8", "MLA picks FlashMLA on Hopper (compute capability 9.x) before Triton MLA",
                                  "vllm/platforms/cuda.py:151,191 (0.8.5); 0.7.3 always picks Triton MLA")
BACKENDS_VALIDATED = Boundary("0.12", "each backend is checked against the GPU, dtypes, MLA, sparse and sinks: a named "
                              "one that fails, or none left, raises", "vllm/platforms/cuda.py:360,399 (0.12.0)")
MLA_TRITON_FP8 = Boundary("0.18", "Triton MLA takes an fp8 KV cache", "vllm/v1/attention/backends/mla/triton_mla.py:30 "
                          "(0.18.0); [\"auto\", \"bfloat16\"] in 0.17.0")
SPARSE_MLA_ON_SM120 = Boundary("0.25", "sparse MLA (DeepSeek-V3.2) runs on compute capability 12.x",
                               "vllm/v1/attention/backends/mla/flashinfer_mla_sparse.py (0.25.0); not in 0.20.0")
ATTENTION_SINKS = Boundary("0.10.1", "attention sinks (gpt-oss): FlashAttention takes them only as FA3, Triton is "
                           "picked off Hopper",
                           "vllm/v1/attention/backends/flash_attn.py:425, platforms/cuda.py:322 (0.10.1.1)")
FA4_SINKS = Boundary("0.20", "FlashAttention takes sinks as FA4 too (compute capability 10.x)",
                     "vllm/v1/attention/backends/fa_utils.py:203 (0.20.0); `== 3` in 0.19.1")

AUTO_DTYPE_BY_PLATFORM = Boundary("0.9", "dtype auto falls back to float16 (with a warning) on a GPU without "
                                  "bfloat16 (compute capability < 8.0); before, the bfloat16 model failed at "
                                  "worker start", "vllm/config.py _resolve_auto_dtype (0.9.2); "
                                  "vllm/worker/worker.py:547 (0.8.5)")

# --------------------------------------------------------------------------- CUDA graphs


CAPTURE_LIST_FLAG = Boundary("0.7", "compilation_config.cudagraph_capture_sizes sets the capture list",
                             "vllm/config.py CompilationConfig (0.7.3); 0.6.3 has only _BATCH_SIZES_TO_CAPTURE")
V1_CAPTURE_BY_BUDGET = Boundary("0.8", "V1 drops capture sizes above max_num_batched_tokens",
                                "vllm/config.py VllmConfig._set_cudagraph_sizes (0.8.5)")
CUDA_GRAPH_SIZES_FLAG = Boundary("0.9", "--cuda-graph-sizes N means [1, 2, 4, 8, ..., N] (default [512])",
                                 "vllm/config.py SchedulerConfig.cuda_graph_sizes (0.9.2)")
CUDA_GRAPH_SIZES_FROM_SEQS = Boundary("0.10", "an unset --cuda-graph-sizes follows min(2 x max_num_seqs, 512)",
                                      "vllm/config/__init__.py _set_cudagraph_sizes (0.10.0)")
CAPTURE_PATTERN_012 = Boundary("0.12", "capture sizes step by 16 above 256; the size lists are verbatim; "
                               "compilation level no longer decides graphs",
                               "vllm/config/vllm.py:994-998 (0.12.0)")
V1_LEVEL_HONOURED = Boundary("0.10.1", "V1 keeps a compilation level the user sets (before: PIECEWISE "
                             "whenever not eager)", "vllm/config/__init__.py:3530 (0.10.1.1); "
                             "vllm/config.py:4590 sets it unconditionally (0.10.0)")
DP_FORCES_EAGER = Boundary("0.8.3", "data parallelism on CUDA forces enforce_eager (DP with CUDA graphs "
                           "unsupported)", "vllm/platforms/cuda.py:163 (0.8.3), :160 (0.8.5); 0.8.0-0.8.2 have "
                           "that code but no --data-parallel-size (vllm/engine/arg_utils.py); not in 0.7.3")
DP_EAGER_ONLY_DEEPEP = Boundary("0.9", "data parallelism forces eager only with DeepEP high-throughput "
                                "kernels", "vllm/platforms/cuda.py:168 (0.9.2)")
CAPTURE_SPEC_TOKENS = Boundary("0.15", "the default top capture size grows with num_speculative_tokens",
                               "vllm/config/vllm.py:1129 (0.15.0)")
CAPTURE_BUDGET_APPENDED = Boundary("0.25", "max_num_batched_tokens itself is captured when below the top size",
                                   "vllm/config/vllm.py (0.25.0; wheel not in the local cache, read from shipped facts)")
CAPTURE_UNIFORM_DECODE = Boundary("0.30", "with speculative decoding the capture list adds the uniform decode "
                                  "sizes n x (1 + num_speculative_tokens)",
                                  "vllm/config/vllm.py:2295 (0.30.0); not in 0.25.0")
CAPTURE_BLACKWELL_1024 = Boundary("0.30", "Blackwell (compute capability 10.x) defaults to a top size of 1024",
                                  "vllm/config/vllm.py (0.30.0; wheel not in the local cache, read from shipped facts)")

# --------------------------------------------------------------------------- reading a config file


BOOL_AS_FLAG = Boundary("0.7", "a YAML true becomes a bare --k and a false is dropped (0.6.3: `--k True`)",
                        "vllm/utils.py:1298 (0.7.3); :1271 str(value) (0.6.3.post1)")
MODEL_IN_CONFIG = Boundary("0.8", "the model may come from the config file (`No model specified!`)",
                           "vllm/utils.py _pull_args_from_config (0.8.5)")
COMPILATION_LITERAL_EVAL = Boundary("0.7", "CompilationConfig.from_cli reads a Python-literal dict",
                                    "vllm/config.py CompilationConfig.from_cli (0.7.3)")
COMPILATION_JSON = Boundary("0.9", "CompilationConfig.from_cli reads JSON only",
                            "vllm/config.py CompilationConfig.from_cli (0.9.2)")
DOTTED_KEYS = Boundary("0.9", "`--x.y v` is merged into `--x '{\"y\": v}'`; `_`->`-` only before the first `.`",
                       "vllm/utils/__init__.py FlexibleArgumentParser.parse_args (0.9.2)")
LISTS_EXPANDED = Boundary("0.10.2", "a YAML list becomes `--k a b c` and `[]` is dropped (before: str(list))",
                          "vllm/utils/__init__.py:2060 (0.10.2); 0.10.1.1 still str()s it")
CONFIG_FIRST_OK = Boundary("0.10.2", "`--config` may come first: args[0] is no longer kept as a subcommand",
                           "vllm/utils/__init__.py _pull_args_from_config (0.10.2)")
UNKNOWN_LIST_SPLIT = Boundary("0.10.2", "argparse reports a rejected list as separate tokens",
                              "vllm/utils/__init__.py:2060 (0.10.2)")
O_IS_OPT_LEVEL = Boundary("0.12", "`-O3` means --optimization-level 3 (before: compilation level)",
                          "vllm/utils/argparse_utils.py:247 (0.12.0)")
O_DOTTED_IS_OPT_LEVEL = Boundary("0.13", "`-O.x v` is `--optimization-level .x` and a stray `v` (before: `-cc.x v`)",
                                 "vllm/utils/argparse_utils.py:247 (0.13.0); :260 turns -O.x into -cc.x (0.12.0)")
DICTS_AS_JSON = Boundary("0.20", "a YAML dict is passed as json.dumps (before: its Python repr)",
                         "vllm/utils/argparse_utils.py:585 (0.20.0); 0.15.0 still str()s it")
NO_FORM_FROM_YAML = Boundary("0.30", "a false becomes `--no-k` when the reading parser registers it",
                             "vllm/utils/argparse_utils.py:657 (0.33.0; 0.30.0 read from shipped facts)")


# --------------------------------------------------------------------------- KV-cache sizing

KV_FIT_MESSAGE_SPELLED = Boundary("0.25", "the V1 KV-cache fit error says \"model's max seq len\" (before: \"models's\")",
                                  "vllm/v1/core/kv_cache_utils.py (0.25.0); :546 \"models's\" (0.8.5, 0.20.0)")

# --------------------------------------------------------------------------- request length (serving time)

REQUEST_LEN_MAX_TOKENS_WORDING = Boundary(
    "0.10.1", "a prompt of max_model_len tokens is refused on its own, and prompt + max_tokens above it "
    "with \"'max_tokens' or 'max_completion_tokens' is too large\"",
    "vllm/entrypoints/openai/serving_engine.py:623,632 (0.10.1.1); :627 \"(P in the messages, O in the "
    "completion)\" (0.10.0)")
REQUEST_LEN_RENDERER = Boundary(
    "0.20", "the renderer refuses the request: \"you requested O output tokens and your prompt contains P "
    "input tokens, for a total of T tokens\"; max_tokens above max_model_len is refused first",
    "vllm/renderers/params.py:419,207 (0.20.0); vllm/entrypoints/openai/engine/serving.py:1086 (0.15.0)")
REQUEST_MAX_TOKENS_CLAMPED = Boundary(
    "0.32", "prompt + max_tokens above max_model_len is served: max_tokens is cut to max_model_len - prompt",
    "vllm/entrypoints/serve/utils/api_utils.py:234 get_max_tokens, vllm/renderers/params.py:225 (0.33.0); "
    "api_utils.py:169 get_max_tokens, no refusal left in vllm/renderers/params.py (0.32.0); "
    "vllm/renderers/params.py:508 still refuses (0.30.0)")

# --------------------------------------------------------------------------- model and tokenizer paths

TOKENIZER_RESOLVED_OFFLINE = Boundary(
    "0.12", "with HF_HUB_OFFLINE, EngineArgs.__post_init__ resolves --tokenizer through the hub cache, so a "
    "missing path fails before the engine config (before: when the tokenizer loads at start-up)",
    "vllm/engine/arg_utils.py:596 (0.12.0); absent in 0.11.0 (vllm-project/vllm#29706)")
LORA_AT_CONFIG = Boundary("0.33", "LoRA without SupportsLoRA fails the config build", "vllm/config/lora.py:147 (0.33.0)")

# --------------------------------------------------------------------------- parser plugins

PLUGIN_LOAD_FAILURE_LOGGED = Boundary(
    "0.7", "a parser plugin that cannot be loaded is logged (\"Failed to load module ...\") and skipped; "
    "0.6.3 raises FileNotFoundError at server start",
    "vllm/entrypoints/openai/tool_parsers/abstract_tool_parser.py:157 (0.7.3); :161 exec_module (0.6.3.post1)")
PLUGIN_AS_MODULE = Boundary(
    "0.30", "a parser plugin may also be an importable module name, tried before the file path",
    "vllm/utils/import_utils.py:85 import_plugin (0.30.0); abstract_tool_parser.py import_from_path (0.25.0)")

# --------------------------------------------------------------------------- transformers

# Not a vLLM release: the transformers beside it, whose wording vLLM's get_config matches.
TRANSFORMERS_REMOTE_CODE_WORDING = Boundary(
    "4.52", "AutoConfig's refusal of an auto_map config without trust_remote_code no longer says "
    "\"requires you to execute the configuration file\": vLLM passes transformers' ValueError on",
    "transformers/dynamic_module_utils.py resolve_trust_remote_code (4.51.3 vs 4.52.4); "
    "vllm/transformers_utils/config.py:147 (0.11.0) matches the old words")
