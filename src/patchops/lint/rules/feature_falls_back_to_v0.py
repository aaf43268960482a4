"""PO306 feature-falls-back-to-v0."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, messages, releases, routing
from patchops.lint.vllm.routing import MULTISTEP_OPTION, V0_COST

# config.json `architectures` of the corpus models these examples stand for.
MAMBA = {"architectures": ["MambaForCausalLM"], "model_type": "mamba"}
BLOOM = {"architectures": ["BloomForCausalLM"], "model_type": "bloom"}
WHISPER = {"architectures": ["WhisperForConditionalGeneration"], "model_type": "whisper", "is_encoder_decoder": True}
QWEN2_VL = {"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl"}


class FeatureFallsBackToV0(Rule):
    """
    ## What it does
    Flags a setting that the V1 engine does not support on vLLM 0.8.5-0.11, naming the setting:
    `--preemption-mode`, `--disable-async-output-proc`, `--scheduler-delay-factor`,
    `--scheduling-policy` (0.8.5), `--kv-cache-dtype` the GPU's attention cannot store,
    `--enable-prompt-adapter`, `--enable-prompt-embeds`, `--load-format sharded_state` or
    `tensorizer`, `--logits-processor-pattern`, `--guided-decoding-backend`, `--dtype float32`,
    `--quantization gguf`, `--task embed` (0.8.5), compute capability below 8.0, partial-prefill
    concurrency, `--otlp-traces-endpoint`, speculative methods V1 lacks, a
    `VLLM_ATTENTION_BACKEND` outside V1's list, pipeline parallelism without a V1 executor, a
    non-CUDA platform (0.8.5), a sliding-window model on the CPU backend (0.9+); multi-step
    scheduling is PO302's. From the model's config.json `architectures`: a class V1 cannot
    run (`SupportsV0Only`: Mamba, Jamba, Bloom, Whisper, Mllama, BART, ...; the list is the
    copy's registry), a Mamba-style class (`HasInnerState`, 0.9-0.10: V1 only when
    `VLLM_USE_V1=1`), and on 0.8.5 a transcription model, whose task resolves to
    "transcription". From `hardware.platform`: a platform whose `supports_v1` says no (0.8.5:
    cpu, xpu, hpu, neuron; 0.9-0.10: hpu, neuron; read from the copy's platforms).

    ## Why is this bad?
    `EngineArgs._is_v1_supported_oracle` checks each of these; the checks a copy has are read
    from its `_raise_or_fallback(feature_name=...)` calls. With `VLLM_USE_V1` unset (V1 is the
    default) vLLM silently builds the older, slower V0 engine instead, with one log line:
    "--preemption-mode is not supported by the V1 Engine. Falling back to V0." With
    `VLLM_USE_V1=1` it refuses to start while building its configuration:
    "NotImplementedError: VLLM_USE_V1=1 is not supported with --preemption-mode.". An
    architecture is logged as vLLM's list: "['BloomForCausalLM'] is not supported by the V1
    Engine. Falling back to V0."

    On 0.11.0 V0 is gone: most of these flags no longer exist (PO101 reports the parse error),
    the rest still fall back, and the API server then stops with an AssertionError right after
    the configuration is built (`assert envs.VLLM_USE_V1`, entrypoints/openai/api_server.py).

    Stage: config time under `VLLM_USE_V1=1`; the silent fallback is a warning; the 0.11.0
    assertion comes after the configuration, so it is a later-stage finding there.

    ## Fix
    Remove the setting (the message says which) to keep V1; set `VLLM_USE_V1=0` only to choose
    V0 on purpose (0.8.5-0.10).
    """

    code = "PO306"
    name = "feature-falls-back-to-v0"
    severity = "warning"
    versions = ">=0.8.5,<0.12"
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model"))
    vllm_message = "VLLM_USE_V1=1 is not supported with <feature>."
    explains = (messages.V1_UNSUPPORTED_CHECK,)
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.8.5}\n"
                "args:\n  max-model-len: 8192\n"),
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.10.1.1}\n"
                "env:\n  VLLM_USE_V1: \"0\"\nargs:\n  preemption-mode: swap\n", vllm="0.10.1.1"),
        # fp8 KV cache on Hopper: FlashAttention 3 stores it, so V1 keeps it
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.8.5}\n"
                "hardware: {gpus: 1, memory_gib: 80, compute_capability: 9.0}\n"
                "args:\n  kv-cache-dtype: fp8\n"),
        # 0.10.1.1: the mp executor runs pipeline parallelism on V1
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.10.1.1}\n"
                "hardware: {gpus: 2}\nargs:\n  pipeline-parallel-size: 2\n", vllm="0.10.1.1"),
        # multi-step is PO302's finding
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.8.5}\n"
                "args:\n  num-scheduler-steps: 8\n"),
        # a multimodal model V1 runs; Mamba on 0.10.1.1 when VLLM_USE_V1=1 opts in; Bloom once V0 is gone
        Example("model: /models/Qwen2-VL-7B-Instruct\n", model=QWEN2_VL),
        Example("model: /models/mamba-130m-hf\nenv:\n  VLLM_USE_V1: \"1\"\n", vllm="0.10.1.1", model=MAMBA),
        Example("model: /models/bloom-560m\n", vllm="0.33.0", model=BLOOM),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.8.5}\n"
                "args:\n  preemption-mode: swap\n", at=(4, 3)),
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.10.1.1}\n"
                "env:\n  VLLM_USE_V1: \"1\"\nargs:\n  preemption-mode: swap\n",
                vllm="0.10.1.1", at=(6, 3), severity="error"),
        # fp8 KV cache on an A100: FlashAttention 2 cannot store it
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.8.5}\n"
                "hardware: {gpus: 1, memory_gib: 40, compute_capability: 8.0}\n"
                "env:\n  VLLM_USE_V1: \"1\"\nargs:\n  kv-cache-dtype: fp8_e5m2\n", at=(7, 3), severity="error"),
        # without the GPU stated, whether FlashAttention 3 stores fp8 is unknown
        Example("VLLM_USE_V1=1 vllm serve /models/Qwen2.5-7B-Instruct --kv-cache-dtype fp8_e5m2\n",
                kind="command", at=(1, 54)),
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.8.5}\n"
                "hardware: {gpus: 2}\nargs:\n  pipeline-parallel-size: 2\n", at=(5, 3)),
        Example("model: /models/Qwen2.5-7B-Instruct\nvllm: {version: 0.11.0}\n"
                "args:\n  max-num-partial-prefills: 2\n", vllm="0.11.0", at=(4, 3), severity="error"),
        Example("model: /models/bloom-560m\nargs:\n  enable-prefix-caching: true\n", model=BLOOM, at=(1, 1)),
        Example("model: /models/bloom-560m\nenv:\n  VLLM_USE_V1: \"1\"\n", vllm="0.10.1.1", model=BLOOM,
                at=(1, 1), severity="error"),
        Example("model: /models/mamba-130m-hf\n", vllm="0.10.1.1", model=MAMBA, at=(1, 1)),
        Example("VLLM_USE_V1=1 vllm serve /models/whisper-large-v3\n", kind="command", model=WHISPER,
                at=(1, 26), severity="error"),
        Example("model: /models/Qwen2.5-7B-Instruct\nhardware: {platform: cpu}\nenv:\n  VLLM_USE_V1: \"1\"\n",
                at=(2, 12), severity="error"),
    ]

    @classmethod
    def stage_in(cls, version: str) -> str:
        """The 0.11.0 crash comes after the configuration (api_server's assert)."""
        return "later" if releases.release(version) >= releases.V0_REMOVED else "config"

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        v = releases.release(facts)
        env = inputs.use_v1_env(cfg)
        if env is False:
            return
        chosen = None
        for trigger in routing.oracle_triggers(cfg, facts):
            if trigger.experimental and env:
                continue  # _warn_or_fallback: VLLM_USE_V1=1 keeps V1 (experimental)
            if trigger.certain:
                chosen = trigger
                break
            chosen = chosen or trigger  # hardware-dependent: report it unless a sure one follows
        if chosen is None or chosen.feature == MULTISTEP_OPTION:
            return
        yield self._finding(cfg, chosen, env, v >= releases.V0_REMOVED, facts.version)

    def _finding(self, cfg: ReadConfig, trigger: routing.Trigger, env, no_v0: bool, ver: str) -> Diagnostic:
        fields = trigger.fields + (("VLLM_USE_V1",) if env is not None else ())
        may = "" if trigger.certain else "may "
        what = trigger.about or trigger.feature
        if trigger.about is None and trigger.at is not None and str(trigger.at.value) not in what:
            what += f" ({trigger.at.key}: {trigger.at.value!s})"
        remove = trigger.remedy or f"remove {trigger.feature}"
        if not trigger.certain:
            what += ", which depends on the GPU (state hardware.compute_capability)"
        short = trigger.feature if trigger.at is None else f"{trigger.at.key}: {trigger.at.value!s}"
        if env:
            return self.diagnostic(
                cfg, trigger.at,
                f"setting {short} with VLLM_USE_V1=1: vLLM {ver} {may}refuse{'' if may else 's'} to start",
                explanation=f"the V1 engine does not support {what}, and VLLM_USE_V1=1 forces V1",
                severity="error" if trigger.certain else "warning", fields=fields,
                vllm_message=trigger.forced_v1_message,
                fix=f"{remove}, or unset VLLM_USE_V1 to let vLLM fall back to V0")
        if no_v0:
            return self.diagnostic(
                cfg, trigger.at,
                f"no V1 support for {short}: vLLM {ver} {may}fall{'' if may else 's'} back to V0, which it no longer has",
                explanation=f"the V1 engine does not support {what}; the API server stops with an "
                "AssertionError right after building its configuration",
                severity="error" if trigger.certain else "warning", fields=fields,
                vllm_message=routing.NO_V0_ERROR, fix=remove)
        if trigger.experimental:  # _warn_or_fallback: V1 only when asked for
            return self.diagnostic(
                cfg, trigger.at,
                f"experimental on V1: {short}; vLLM {ver} falls back to V0",
                explanation=f"the V1 engine runs {what} only as an experiment, so with VLLM_USE_V1 "
                f"unset vLLM falls back to V0: {V0_COST}",
                fields=fields, vllm_message=trigger.fallback_message,
                fix="set VLLM_USE_V1=1 to run it on V1 (experimental), or VLLM_USE_V1=0 to choose V0 on purpose")
        return self.diagnostic(
            cfg, trigger.at,
            f"no V1 support for {short}: vLLM {ver} {may}silently fall{'' if may else 's'} back to V0",
            explanation=f"the V1 engine does not support {what}, so {V0_COST}",
            fields=fields, vllm_message=trigger.fallback_message,
            fix=f"{remove} to keep the V1 engine (or set VLLM_USE_V1=0 to choose V0 on purpose)")
