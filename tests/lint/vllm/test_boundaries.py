"""Both sides of every named vLLM boundary in lint/vllm/releases.py.

Each boundary has one probe: a config whose prediction or finding changes at that release.
"Below" is the newest shipped release before the boundary, "at" the oldest shipped release at
or after it, relabelled to the boundary's own version, so `<` against `<=` matters.
"""

from __future__ import annotations

import dataclasses

import pytest

from patchops.lint.explain import explain
from patchops.lint.input.loaders import load_command, load_text
from patchops.lint.facts.model import Facts, facts_for_version, shipped_versions
from patchops.lint.input.model_config import model_facts_from_dict
from patchops.lint.reading import read_as_vllm
from patchops.lint.vllm import attention, cuda_graphs, inputs, lora, releases, routing, scheduler, speculative

from patchops.lint.rule import Example
from patchops.lint.rules.generate_runner_on_pooling_model import BGE_M3
from patchops.lint.rules.kv_cache_too_small import LLAMA_31_8B
from patchops.lint.rules.speculative_config_invalid import DRAFT_ON_SELF, QWEN_7B
from patchops.lint.rules.mamba_blocks_below_max_seqs import QWEN35_27B, SPEC_80G
from patchops.lint.runner import lint_example
from patchops.lint.rules.tokenizer_not_found import TokenizerNotFound

from handmade import as_read, model_of
from lintkit import findings


def below(boundary: releases.Boundary) -> Facts:
    return facts_for_version([v for v in shipped_versions() if releases.release(v) < boundary][-1])


def at(boundary: releases.Boundary) -> Facts:
    first = [v for v in shipped_versions() if releases.release(v) >= boundary][0]
    return dataclasses.replace(facts_for_version(first), version=str(boundary))


def seen(text: str, facts: Facts, kind: str = "spec"):
    cfg = load_command(text) if kind == "command" else load_text(text, kind=kind)
    return read_as_vllm(cfg, facts)


def spec(args: str = "", env: str = "", hardware: str = "") -> str:
    text = "model: m\n"
    for block, body in (("env", env), ("hardware", hardware), ("args", args)):
        if body:
            text += f"{block}:\n" + "".join(f"  {line}\n" for line in body.strip("\n").splitlines())
    return text


def engine(text, kind="spec"):
    return lambda f: routing.engine(seen(text, f, kind), f)


def triggers(text, kind="spec", flags=True):
    """Probe the V1 oracle; flags=False reads without a flag table, for values argparse refuses."""
    def probe(f):
        read = seen(text, f if flags else dataclasses.replace(f, flags={}), kind)
        return [t.feature for t in routing.oracle_triggers(read, f)]
    return probe


def triggers_with_model(text, model):
    """Probe the V1 oracle for a config whose model's config.json is `model`."""
    def probe(f):
        read = seen(text, f)
        read = read.with_model(model_of(read, model_facts_from_dict(model)))
        return [t.feature for t in routing.oracle_triggers(read, f)]
    return probe


def explained_with_model(row, text, model):
    """Probe one `patchops explain` row for a config whose model's config.json is `model`."""
    def probe(f):
        cfg = load_text(text)
        source = model_of(cfg, model_facts_from_dict(model))
        return next(r.value for r in explain(cfg, f, model=source) if r.field == row)
    return probe


def predict(function, text, kind="spec"):
    return lambda f: function(seen(text, f, kind), f).value


def found(code, text, kind="spec", **facts):
    """Return (severity, vllm_message) of `code`'s one finding, None when it does not fire."""
    def probe(f):
        hits = findings(code, text, f.version if f.version in shipped_versions() else _shipped_for(f),
                        kind, version=f.version, **facts)
        return (hits[0].severity, hits[0].vllm_message) if hits else None
    return probe


def kv_fit_message(f: Facts) -> str:
    """Return PO622's quote of vLLM's KV-cache fit error, up to "max seq len"."""
    example = Example("model: m\nhardware: {memory_gib: 24}\nargs:\n  max-model-len: 131072\n",
                      vllm=f.version if f.version in shipped_versions() else _shipped_for(f),
                      facts={"version": f.version}, model=LLAMA_31_8B)
    [hit] = [d for d in lint_example(example) if d.code == "PO622"]
    return hit.vllm_message.split(" max seq len")[0]


def _shipped_for(f: Facts) -> str:
    return [v for v in shipped_versions() if releases.release(v) >= releases.release(f)][0]


def arg(name, text, kind="spec"):
    def probe(f):
        found_ = seen(text, f, kind).args.get(name)
        return None if found_ is None else found_.value
    return probe


CC_80 = "compute_capability: 8.0"
REQUEST = "model: m\nargs:\n  max-model-len: 8192\nworkload:\n  prompt_tokens: 7169\n  max_tokens: 1024\n"
STEPS = "num-scheduler-steps: 8"
V1_ON = 'VLLM_USE_V1: "1"'
V1_OFF = 'VLLM_USE_V1: "0"'

# boundary -> (probe, value below, value at)
def refusal(predict, text, model):
    """Probe an MLA / sinks refusal: how vLLM refuses, None when it does not."""
    def probe(f):
        found = predict(as_read(load_text(text)), f, model)
        return None if found is None else found.refusal
    return probe


MLA_MODEL = {"model_type": "deepseek_v3", "kv_lora_rank": 512, "qk_rope_head_dim": 64}
SINK_MODEL = {"model_type": "gpt_oss", "head_dim": 64}
FP8_ON = "kv-cache-dtype: fp8"


PROBES = {
    # engine
    "V1_ENGINE": (lambda f: engine(spec(env=V1_ON))(f).value, routing.V0, routing.V1),
    "V1_DEFAULT": (lambda f: engine(spec("max-model-len: 4096"))(f).value, routing.V0, routing.V1),
    "V1_ORACLE": (triggers(spec(STEPS)), [], ["--num-scheduler-steps"]),
    "V0_REMOVED": (lambda f: engine(spec(env=V1_OFF))(f).error, None, routing.NO_V0_ERROR),
    "V1_CONFIG_WITHOUT_V0": (lambda f: routing.config_engine(seen(spec(env=V1_OFF), f), f).value,
                             routing.V0, routing.V1),
    "V1_ONLY": (lambda f: engine(spec(env=V1_OFF))(f).value, routing.V0, routing.V1),
    "SPECULATIVE_CONFIG": (lambda f: inputs.speculative_method(seen(spec('speculative-model: "[ngram]"'), f), f),
                           "ngram", None),
    # SpeculativeConfig.__post_init__: who drafts itself, which methods need no draft model
    "SPEC_MIMO_TARGET": (lambda f: speculative.drafts_itself(f, None, "mimo"), False, True),
    "SPEC_MORE_TARGETS": (lambda f: speculative.drafts_itself(f, None, "qwen3_next"), False, True),
    "SPEC_MTP_BY_METHOD": (lambda f: (speculative.drafts_itself(f, "deepseek_mtp", "qwen2"),
                                      speculative.drafts_itself(f, None, "deepseek_v3")), (False, True), (True, False)),
    "SPEC_NO_MODEL_WORDING": (lambda f: speculative.no_draft_model(f, "eagle"),
                              speculative.NO_DRAFT_MODEL, speculative.NO_DRAFT_MODEL_011),
    "SPEC_SUFFIX": (lambda f: "suffix" in speculative.self_drafting(f), False, True),
    "SPEC_EXTRACT_HIDDEN_STATES": (lambda f: "extract_hidden_states" in speculative.self_drafting(f), False, True),
    "SPEC_NGRAM_GPU": (lambda f: ("ngram_gpu" in speculative.self_drafting(f),
                                  "ngram_gpu" in speculative.window_methods(f)), (False, False), (True, True)),
    "SPEC_CUSTOM_CLASS": (lambda f: speculative.no_draft_model(f, "custom_class"),
                          speculative.NO_DRAFT_MODEL_011, speculative.CUSTOM_CLASS_NEEDS_MODEL),
    "SPEC_DSPARK": (lambda f: speculative.drafts_itself(f, "dspark", "qwen2"), False, True),
    # the V1 oracle's checks
    "ORACLE_TENSORIZER_OK": (triggers(spec("load-format: tensorizer")), ["--load_format tensorizer"], []),
    "ORACLE_POLICY_OK": (triggers(spec("scheduling-policy: priority")), ["--scheduling-policy"], []),
    "ORACLE_GUIDED_EXACT": (triggers(spec("guided-decoding-backend: xgrammar:no-fallback"), flags=False), [],
                            ["--guided-decoding-backend=xgrammar:no-fallback"]),
    "ORACLE_OUTLINES_OK": (triggers(spec("guided-decoding-backend: outlines")),
                           ["--guided-decoding-backend=outlines"], []),
    "ORACLE_ROCM_KV_OK": (triggers(spec("kv-cache-dtype: fp8", hardware="platform: rocm\n" + CC_80)),
                          ["--kv-cache-dtype", "rocm"], []),
    "ORACLE_KV_BY_PLATFORM": (triggers(spec("kv-cache-dtype: fp8", hardware="compute_capability: 10.0")),
                              ["--kv-cache-dtype"], []),
    "ORACLE_PROMPT_ADAPTER_GONE": (triggers(spec("enable-prompt-adapter: true")),
                                   ["--enable-prompt-adapter"], []),
    "ORACLE_PROMPT_EMBEDS": (triggers(spec("enable-prompt-embeds: true")), [], ["--enable-prompt-embeds"]),
    "ORACLE_MODEL_CHECKS_GONE": (triggers(spec("dtype: float32")), ["--dtype torch.float32"], []),
    "ORACLE_SPEC_METHODS": (triggers(spec("speculative-config: '{\"method\": \"medusa\", \"model\": \"d\", "
                                          "\"num_speculative_tokens\": 2}'")), ["Speculative Decoding"], []),
    "ORACLE_SPEC_CHECK_GONE": (triggers(spec("speculative-config: '{\"model\": \"draft\", "
                                             "\"num_speculative_tokens\": 2}'")), ["Speculative Decoding"], []),
    "ORACLE_PP_MP_OK": (triggers(spec("pipeline-parallel-size: 2\ndistributed-executor-backend: mp")),
                        ["Pipeline Parallelism without Ray distributed executor"], []),
    "ORACLE_MULTISTEP_GONE": (triggers(spec(STEPS)), ["--num-scheduler-steps"], []),
    "CPU_BATCH_DEFAULTS": (predict(scheduler.max_num_seqs, spec(env=V1_ON, hardware="platform: cpu\nmemory_gib: 16")),
                           256, 32),
    "CPU_DEFAULTS_BY_WORLD_SIZE": (predict(scheduler.max_num_batched_tokens,
                                           spec("tensor-parallel-size: 2", hardware="platform: cpu")), 2048, 4096),
    "TPU_BATCH_BY_CHIP": (predict(scheduler.max_num_batched_tokens,
                                  spec(env=V1_ON, hardware="platform: tpu\nname: TPU v5e\nmemory_gib: 16")), 2048, 512),
    "MLA_TRITON_FP8_REFUSED": (refusal(attention.mla_refusal, spec(FP8_ON, hardware="compute_capability: '9.0'"),
                                       MLA_MODEL), None, attention.TRITON_FP8),
    "MLA_FLASHMLA_ON_HOPPER": (refusal(attention.mla_refusal, spec(FP8_ON, hardware="compute_capability: '9.0'"),
                                       MLA_MODEL), attention.TRITON_FP8, None),
    "BACKENDS_VALIDATED": (refusal(attention.mla_refusal, spec(FP8_ON, hardware="compute_capability: '8.0'"),
                                   MLA_MODEL), attention.TRITON_FP8, attention.NO_VALID),
    "MLA_TRITON_FP8": (refusal(attention.mla_refusal, spec(FP8_ON, hardware="compute_capability: '8.0'"),
                               MLA_MODEL), attention.NO_VALID, None),
    "SPARSE_MLA_ON_SM120": (refusal(attention.mla_refusal, spec(hardware="compute_capability: '12.0'"),
                                    dict(MLA_MODEL, model_type="deepseek_v32", index_topk=2048)), attention.NO_VALID, None),
    "ATTENTION_SINKS": (refusal(attention.sink_refusal, spec(env="VLLM_ATTENTION_BACKEND: FLASH_ATTN",
                                                             hardware="compute_capability: '8.0'"), SINK_MODEL),
                        None, attention.FA3_SINKS),
    "FA4_SINKS": (refusal(attention.sink_refusal, spec("attention-backend: FLASH_ATTN",
                                                       hardware="compute_capability: '10.0'"), SINK_MODEL),
                  attention.SELECTED, None),
    "AUTO_DTYPE_BY_PLATFORM": (lambda f: [d.severity for d in lint_example(Example(
        "model: m\nhardware: {compute_capability: 7.5}\n", vllm=_shipped_for(f), facts={"version": f.version},
        model={"torch_dtype": "bfloat16"})) if d.code == "PO602"], ["error"], ["info"]),
    "ORACLE_PLATFORM_DEFAULT_V1": (triggers(spec(hardware="platform: rocm")), ["rocm"], []),
    "ORACLE_CPU_SLIDING_WINDOW": (triggers_with_model(spec(hardware="platform: cpu"), {"sliding_window": 4096}),
                                  [], ["sliding window (CPU backend)"]),   # 0.9.1: V1 takes x86 CPUs
    "ORACLE_CC_CHECK_GONE": (triggers(spec(hardware="compute_capability: 7.5")), ["Compute Capability < 8.0"], []),
    "ORACLE_BACKENDS_0_9": (lambda f: "FLEX_ATTENTION" in routing.v1_oracle_backends(f.version), False, True),
    "ORACLE_BACKENDS_0_10_1": (lambda f: "TREE_ATTN" in routing.v1_oracle_backends(f.version), False, True),
    "ORACLE_BACKENDS_0_10_2": (lambda f: "FLASHINFER_MLA" in routing.v1_oracle_backends(f.version), False, True),
    "ORACLE_BACKENDS_0_11": (lambda f: "ROCM_ATTN" in routing.v1_oracle_backends(f.version), False, True),
    # scheduler
    "V0_BATCH_2048": (predict(scheduler.max_num_batched_tokens, spec("enable-chunked-prefill: true", env=V1_OFF)),
                      512, 2048),
    "V0_CHUNKED_BLOCKERS": (predict(scheduler.chunked_prefill, spec("max-model-len: 40000", env=V1_OFF,
                                                                    hardware="platform: rocm")), True, False),
    "SEQS_DEFAULT_AT_LAUNCH": (lambda f: found("PO202", spec(), field_defaults={"max_num_seqs": 4096})(f)
                               is not None, False, True),
    "V1_BATCH_BY_MEMORY": (predict(scheduler.hardware_tier, spec(hardware="memory_gib: 80\nname: NVIDIA A100")),
                           scheduler.SMALL, scheduler.LARGE),
    "A100_KEEPS_SMALL": (predict(scheduler.hardware_tier, spec(hardware="memory_gib: 80\nname: NVIDIA A100")),
                         scheduler.LARGE, scheduler.SMALL),
    "SEQS_CAPPED_BY_BUDGET": (predict(scheduler.max_num_seqs, spec("max-num-batched-tokens: 128")), 256, 128),
    "CHUNKED_PREFILL_HONOURED": (predict(scheduler.chunked_prefill, "vllm serve m --no-enable-chunked-prefill",
                                         "command"), True, False),
    "PREFIX_CACHING_BY_ATTN_TYPE": (explained_with_model("enable_prefix_caching", spec(),
                                                         {"architectures": ["WhisperForConditionalGeneration"],
                                                          "is_encoder_decoder": True}), True, False),
    "BUDGET_FOLLOWS_MODEL_LEN": (predict(scheduler.max_num_batched_tokens,
                                         "vllm serve m --no-enable-chunked-prefill --max-model-len 100000",
                                         "command"), 2048, 100000),
    "HUGE_TIER": (predict(scheduler.hardware_tier, spec(hardware="memory_gib: 192\nname: NVIDIA B200")),
                  scheduler.LARGE, scheduler.HUGE),
    # attention
    "BACKEND_ENUM_NAMES": (lambda f: attention.backend_label("XFORMERS", f), "xformers", "XFORMERS"),
    "PLATFORM_SELECTS_BACKEND": (predict(attention.v0_attention_backend,
                                         spec(env="VLLM_ATTENTION_BACKEND: TORCH_SDPA")), "TORCH_SDPA", None),
    "UNKNOWN_BACKEND_IGNORED": (lambda f: found("PO501", spec(env="VLLM_ATTENTION_BACKEND: FLASH_ATTENTION"))(f)[0],
                                "error", "warning"),
    "FA_FP8_KV": (predict(attention.v0_attention_backend, spec("kv-cache-dtype: fp8",
                                                               hardware="compute_capability: 9.0")),
                  "XFORMERS", "FLASH_ATTN"),
    "FLASHINFER_CHECKED_AT_START": (
        lambda f: found("PO502", spec(env="VLLM_ATTENTION_BACKEND: FLASHINFER"), has_flashinfer=False)(f)[1]
        .startswith("TypeError: 'NoneType' object is not callable"), True, False),
    "BACKEND_VALIDATED_BY_SELECTOR": (
        lambda f: found("PO501", spec(env="VLLM_ATTENTION_BACKEND: FLASH_ATTENTION\n" + V1_OFF))(f)[0],
        "warning", "error"),
    "BACKEND_VALIDATED_BY_ENVS": (
        lambda f: found("PO501", spec(env="VLLM_ATTENTION_BACKEND: FLASH_ATTENTION"))(f)[1].startswith(
            "Invalid value 'FLASH_ATTENTION' for VLLM_ATTENTION_BACKEND"), False, True),
    "ENVIRON_VALIDATED": (lambda f: found("PO503", spec(env="VLLM_ATTENTION_BACKEND: FLASH_ATTN"))(f)[1],
                          None, "Unknown vLLM environment variable detected: VLLM_ATTENTION_BACKEND"),
    # CUDA graphs
    "CAPTURE_LIST_FLAG": (lambda f: cuda_graphs.capture_fix(f, 100).startswith("set compilation-config"),
                          False, True),
    "V1_CAPTURE_BY_BUDGET": (lambda f: max(predict(cuda_graphs.capture_sizes,
                                                   spec("max-num-batched-tokens: 64", env=V1_ON))(f)), 512, 64),
    "CUDA_GRAPH_SIZES_FLAG": (lambda f: max(predict(cuda_graphs.capture_sizes,
                                                    spec("cuda-graph-sizes: 64", env=V1_ON))(f)), 512, 64),
    "CUDA_GRAPH_SIZES_FROM_SEQS": (lambda f: max(predict(cuda_graphs.capture_sizes,
                                                         spec("max-num-seqs: 32", env=V1_ON))(f)), 512, 64),
    "CAPTURE_PATTERN_012": (lambda f: 264 in predict(cuda_graphs.capture_sizes, spec("max-num-seqs: 300"))(f),
                            True, False),
    "CAPTURE_SPEC_TOKENS": (lambda f: max(predict(cuda_graphs.capture_sizes, spec(
        "max-num-seqs: 64\nspeculative-config: '{\"method\": \"ngram\", \"num_speculative_tokens\": 3, "
        "\"prompt_lookup_max\": 4}'"))(f)), 128, 512),
    "CAPTURE_BUDGET_APPENDED": (lambda f: 100 in predict(cuda_graphs.capture_sizes,
                                                         spec("max-num-batched-tokens: 100"))(f), False, True),
    "CAPTURE_UNIFORM_DECODE": (lambda f: 3 in predict(cuda_graphs.capture_sizes, spec(
        "speculative-config: '{\"method\": \"ngram\", \"num_speculative_tokens\": 2, "
        "\"prompt_lookup_max\": 2}'"))(f), False, True),
    "V1_LEVEL_HONOURED": (lambda f: bool(predict(cuda_graphs.capture_sizes,
                                                 spec("compilation-config: '{\"level\": 0}'"))(f)), True, False),
    "DP_FORCES_EAGER": (predict(cuda_graphs.effective_eager, spec("data-parallel-size: 2", env=V1_ON)),
                        False, True),
    "DP_EAGER_ONLY_DEEPEP": (predict(cuda_graphs.effective_eager, spec("data-parallel-size: 2")), True, False),
    "CAPTURE_BLACKWELL_1024": (lambda f: max(predict(cuda_graphs.capture_sizes, spec(
        "max-num-seqs: 1024\nmax-num-batched-tokens: 8192", hardware="compute_capability: 10.0"))(f)),
        512, 1024),
    # KV-cache sizing
    "KV_FIT_MESSAGE_SPELLED": (kv_fit_message, "To serve at least one request with the models's",
                               "To serve at least one request with the model's"),
    # reading a config file
    "BOOL_AS_FLAG": (arg("enforce_eager", spec("enforce-eager: true")), None, True),
    "COMPILATION_LITERAL_EVAL": (arg("compilation_config", spec("compilation-config: \"{'level': 3}\"")),
                                 None, {"level": 3}),
    "COMPILATION_JSON": (arg("compilation_config", spec("compilation-config: \"{'level': 3}\"")),
                         {"level": 3}, None),
    "DOTTED_KEYS": (arg("compilation_config", spec("compilation-config.level: 3")), None, {"level": 3}),
    "LISTS_EXPANDED": (lambda f: seen(spec("served-model-name: [a, b]"), f).dropped("served_model_name") is not None,
                       True, False),
    "UNKNOWN_LIST_SPLIT": (lambda f: found("PO101", spec("frobnicate: [1, 2]"))(f)[1],
                           "vllm: error: unrecognized arguments: --frobnicate [1, 2]",
                           "vllm: error: unrecognized arguments: --frobnicate 1 2"),
    "O_IS_OPT_LEVEL": (lambda f: "compilation_config" in seen("vllm serve m -O3", f, "command").args, True, False),
    "O_DOTTED_IS_OPT_LEVEL": (lambda f: sorted(seen("vllm serve m -O.mode=0", f, "command").args),
                              ["compilation_config"], ["optimization_level"]),
    "DICTS_AS_JSON": (arg("compilation_config", spec("compilation-config: {level: 3}")), None, {"level": 3}),
    "NO_FORM_FROM_YAML": (arg("enable_prefix_caching", "model: m\nentrypoint: api_server\nargs:\n"
                                                       "  enable-prefix-caching: false\n"), None, False),
    # request length (serving time)
    "REQUEST_LEN_MAX_TOKENS_WORDING": (lambda f: found("PO209", REQUEST)(f)[1][:47],
                                       "This model's maximum context length is 8192 tok",
                                       "'max_tokens' or 'max_completion_tokens' is too "),
    "REQUEST_LEN_RENDERER": (lambda f: found("PO209", REQUEST)(f)[1][:47],
                             "'max_tokens' or 'max_completion_tokens' is too ",
                             "This model's maximum context length is 8192 tok"),
    "REQUEST_MAX_TOKENS_CLAMPED": (found("PO209", REQUEST), ("error", (
        "This model's maximum context length is 8192 tokens. However, you requested 1024 output tokens and "
        "your prompt contains at least 7169 input tokens, for a total of at least 8193 tokens. Please reduce "
        "the length of the input prompt or the number of requested output tokens.")), ("warning", None)),
    # pooling models
    "DRAFT_MODEL_ON_V1": (lambda f: [d.vllm_message for d in lint_example(Example(
        DRAFT_ON_SELF, kind="command", vllm=_shipped_for(f), model=QWEN_7B, facts={"version": f.version}))
        if d.code == "PO321"], ["Draft model speculative decoding is not supported yet."], []),
    "MAMBA_BLOCKS_BOUND_SEQS": (lambda f: [d.severity for d in lint_example(Example(
        SPEC_80G + "  max-num-seqs: 1024\n", vllm=_shipped_for(f), model=QWEN35_27B,
        facts={"version": f.version})) if d.code == "PO625"], [], ["error"]),
    "EMBEDDING_RUNNER_MESSAGE": (lambda f: [d.vllm_message.split(" do")[0] for d in lint_example(Example(
        "vllm serve m --runner generate\n", kind="command", vllm=_shipped_for(f), model=BGE_M3,
        facts={"version": f.version})) if d.code == "PO314"], ["This model"], ["Embedding models"]),
    "V1_POOLING": (lambda f: scheduler.max_num_batched_tokens(seen(spec(
        "task: embed\noverride-pooler-config: '{\"pooling_type\": \"MEAN\"}'\nmax-model-len: 1024",
        env='VLLM_USE_V1: "1"'), f), f).value, 2048, 1024),
    # parser plugins
    "PLUGIN_LOAD_FAILURE_LOGGED": (lambda f: found("PO907", spec("tool-parser-plugin: /nope/x.py"))(f)[0],
                                   "error", "warning"),
    "PLUGIN_AS_MODULE": (found("PO907", spec("tool-parser-plugin: my_company.parsers")),
                         ("warning", "Failed to load module 'my_company' from my_company.parsers."), None),
    # model and tokenizer paths: where a missing tokenizer stops vLLM
    "TOKENIZER_RESOLVED_OFFLINE": (lambda f: TokenizerNotFound.stage_in(f.version), "later", "config"),
    "LORA_AT_CONFIG": (lambda f: lora.stage(f), "later", "config"),
}
# Probes that need a file on disk take tmp_path.
FILE_PROBES = ("MODEL_IN_CONFIG", "CONFIG_FIRST_OK")


# Boundaries of the transformers beside a copy, not of vLLM: probed below on the rule that words them.
OTHER_PROJECTS = ("TRANSFORMERS_",)


def boundaries():
    return {name: value for name, value in vars(releases).items()
            if isinstance(value, releases.Boundary) and not name.startswith(OTHER_PROJECTS)}


@pytest.mark.parametrize("version,message", [("4.51.3", "REMOTE_CODE_NEEDS_TRUST"), ("4.52.0", "TRANSFORMERS_REMOTE_CODE")])
def test_transformers_remote_code_wording_on_both_sides(version, message):
    from patchops.lint.rules import remote_code_needs_trust as rule
    from patchops.lint.vllm import messages

    assert releases.TRANSFORMERS_REMOTE_CODE_WORDING.source.startswith("transformers/")
    transformers = {"version": version, "model_types": ["llama", "qwen2"]}
    [found] = [d for d in lint_example(Example("vllm serve org/custom\n", kind="command", vllm="0.11.0",
                                               model=rule.REMOTE, facts={"transformers": transformers}))
               if d.code == "PO315"]
    assert found.vllm_message == getattr(messages, message).format(model="org/custom")


def test_every_boundary_has_a_probe():
    assert set(boundaries()) == set(PROBES) | set(FILE_PROBES)


def test_every_boundary_names_its_change_and_source():
    for name, boundary in boundaries().items():
        assert boundary.change, name
        assert boundary.source.startswith("vllm/") and "(" in boundary.source, name


@pytest.mark.parametrize("name", sorted(PROBES))
def test_both_sides_of(name):
    boundary = getattr(releases, name)
    probe, before, after = PROBES[name]
    assert probe(below(boundary)) == before, f"{name} below {boundary}"
    assert probe(at(boundary)) == after, f"{name} at {boundary}"


def test_both_sides_of_model_in_config(tmp_path):
    (tmp_path / "c.yaml").write_text("model: m\nmax-model-len: 4096\n")
    command = f"vllm serve --config {tmp_path / 'c.yaml'}"
    rejected = lambda f: getattr(seen(command, f, "command").refusal("model"), "detail", None)
    assert rejected(below(releases.MODEL_IN_CONFIG)).startswith("No model_tag specified!")
    assert rejected(at(releases.MODEL_IN_CONFIG)) is None


def test_both_sides_of_config_first_ok(tmp_path):
    (tmp_path / "c.yaml").write_text("max-model-len: 4096\n")
    command = f"python -m vllm.entrypoints.openai.api_server --config {tmp_path / 'c.yaml'} --model m"
    rejected = lambda f: seen(command, f, "command").refusal("config") is not None
    assert rejected(below(releases.CONFIG_FIRST_OK)) is True
    assert rejected(at(releases.CONFIG_FIRST_OK)) is False
