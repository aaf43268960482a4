"""PO402 capture-settings-moot-with-eager."""

from __future__ import annotations

from typing import Dict, Iterator, List

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, wording
from patchops.lint.vllm.cuda_graphs import CAPTURE_COMPILATION_KEYS, CAPTURE_FLAGS


class CaptureSettingsMootWithEager(Rule):
    """
    ## What it does
    Flags CUDA graph capture settings (`cuda_graph_sizes`, `cudagraph_capture_sizes`,
    `max_cudagraph_capture_size`, `max_seq_len_to_capture`,
    `compilation_config.cudagraph_capture_sizes` / `.max_cudagraph_capture_size`) in a config
    that runs eagerly: `enforce_eager` set, or a vLLM build that hardcodes it (the CoreX fork).

    ## Why is this bad?
    With eager execution vLLM captures no CUDA graphs at all, in every version, so these
    settings do nothing. Usually one of the two was not meant: a benchmark tuning capture sizes
    measures nothing, or the eager flag (or the fork) costs the decode speed the sizes were
    chosen for.

    ## Fix
    Remove the capture settings, or drop `enforce_eager` (on a fork that hardcodes it, restore
    the flag with the `corex-eager-allreduce` patchset) to use CUDA graphs.
    """

    code = "PO402"
    name = "capture-settings-moot-with-eager"
    severity = "warning"
    versions = ">=0.6.3"
    vllm_message = None
    VALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.10.2}\n"
                "args:\n"
                "  cuda-graph-sizes: [1, 2, 4, 8, 16]\n", vllm="0.10.2"),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "enforce-eager: true\n"
                "max-model-len: 8192\n", vllm="0.8.5", kind="config"),
    ]
    INVALID = [
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.10.2}\n"
                "args:\n"
                "  enforce-eager: true\n"
                "  cuda-graph-sizes: [1, 2, 4, 8, 16]\n", vllm="0.10.2", at=(5, 3)),
        Example("vllm serve /models/Qwen2.5-7B-Instruct --enforce-eager --max-seq-len-to-capture 16384\n",
                vllm="0.6.3.post1", kind="command", at=(1, 56)),
        # The CoreX fork hardcodes enforce_eager=True: the capture list is moot without the flag.
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "vllm: {version: 0.8.5}\n"
                "hardware: {platform: corex, gpus: 2}\n"
                "args:\n"
                "  compilation-config: '{\"cudagraph_capture_sizes\": [1, 2, 4, 8]}'\n",
                vllm="0.8.5", at=(5, 3), facts={"hardcoded": {"enforce_eager": "True"}}),
        Example("model: /models/Qwen2.5-7B-Instruct\n"
                "enforce-eager: true\n"
                "compilation-config.cudagraph_capture_sizes: '[1, 2, 4, 8]'\n", vllm="0.9.2",
                kind="config", at=(3, 1)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        eager = inputs.enforce_eager(cfg, facts)
        if not eager.value:
            return
        found: Dict[int, List[str]] = {}
        anchors: Dict[int, Setting] = {}
        for name in CAPTURE_FLAGS:
            setting = inputs.setting(cfg, name)
            if setting is not None:
                found.setdefault(id(setting), []).append(name)
                anchors[id(setting)] = setting
        for key in CAPTURE_COMPILATION_KEYS:
            _, setting = inputs.compilation_value(cfg, key)
            if setting is not None:
                found.setdefault(id(setting), []).append(f"compilation_config.{key}")
                anchors[id(setting)] = setting
        hardcoded = "hardcodes" in eager.reason
        for ident, names in found.items():
            setting = anchors[ident]
            label = wording.and_list(names)
            shown = wording.shown(setting)
            subject = f"{label} ({shown})" if len(names) == 1 and names[0] == setting.name else label
            message = (f"{subject} {'has' if len(names) == 1 else 'have'} no effect: vLLM "
                       f"{facts.version} runs eagerly")
            explanation = f"{eager.reason}, so vLLM captures no CUDA graphs"
            fix = ("remove the capture settings, or restore the enforce-eager flag with the "
                   "corex-eager-allreduce patchset to use CUDA graphs" if hardcoded else
                   "remove the capture settings, or drop enforce-eager to use CUDA graphs")
            yield self.diagnostic(cfg, setting, message, explanation=explanation,
                                  fields=tuple(names) + ("enforce_eager",), fix=fix)
