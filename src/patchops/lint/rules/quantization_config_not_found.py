"""PO809 quantization-config-not-found."""

from __future__ import annotations

import glob
import os
from typing import Iterator, Sequence

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, local_files, messages
from patchops.lint.vllm.quantization_claims import QUANTIZATION

# A local folder both here (tests run from the repository root) and in the conformance corpus.
FOLDER = "tests/conformance/corpus/models/Qwen2.5-7B-Instruct"
UNQUANTIZED = {"model_type": "qwen2", "torch_dtype": "bfloat16", "num_attention_heads": 28}
AWQ = dict(UNQUANTIZED, quantization_config={"quant_method": "awq", "bits": 4})


class QuantizationConfigNotFound(Rule):
    """
    ## What it does
    Flags `--quantization METHOD` for a checkpoint method (awq, gptq, ...) on a local model
    folder whose config.json has no `quantization_config` and which holds none of the files
    that method reads its settings from (`quantize_config.json`, `quant_config.json`, ...).
    The file names per method are read from the copy (`get_config_filenames()` of each
    method's config class); online methods such as `fp8` need no file and are never
    flagged. A method that reads no file but whose config class needs arguments
    (`fbgemm_fp8`, `compressed-tensors`) is flagged whenever config.json has no
    `quantization_config`. Only a local folder is checked: for a hub name vLLM downloads
    the files.

    ## Why is this bad?
    vLLM refuses to build its config: "Cannot find the config file for awq", or
    "FBGEMMFp8Config.__init__() missing 2 required positional arguments: 'ignore_list' and
    'input_scale_ub'". Usually the model is not the quantized checkpoint you meant to serve.

    ## Fix
    Serve the quantized checkpoint, drop `--quantization` (a quantized checkpoint's
    config.json names its method by itself), or use an online method such as `fp8`.
    """

    code = "PO809"
    name = "quantization-config-not-found"
    severity = "error"
    versions = ">=0.7"
    needs = Needs(model=True)
    vllm_message = messages.QUANTIZATION_CONFIG_NOT_FOUND
    VALID = [
        Example(f"model: {FOLDER}\nargs:\n  quantization: fp8\n", model=UNQUANTIZED),
        Example(f"model: {FOLDER}\nargs:\n  quantization: awq\n", model=AWQ),
        Example("model: org/not-here\nargs:\n  quantization: awq\n", model=UNQUANTIZED),
    ]
    INVALID = [
        Example(f"model: {FOLDER}\nargs:\n  quantization: awq\n", model=UNQUANTIZED, at=(3, 3)),
        Example(f"vllm serve {FOLDER} -q gptq\n", kind="command", vllm="0.33.0", model=UNQUANTIZED,
                at=(1, 13 + len(FOLDER))),
        Example(f"model: {FOLDER}\nargs:\n  quantization: fbgemm_fp8\n", vllm="0.10.1.1", model=UNQUANTIZED,
                at=(3, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, QUANTIZATION)
        model = cfg.model_facts
        if found is None or model is None or model.quant_config_inline or not isinstance(found.value, str):
            return
        method = found.value.lower()
        needs = facts.quantization_needs.get(method)
        folder = local_files.local_model_folder(cfg)
        if not needs or folder is None or inputs.setting(cfg, "hf_overrides") is not None:
            return
        if needs.missing is not None:
            yield self.diagnostic(
                cfg, found, f"quantization {method!r} needs a quantization_config in config.json: none here",
                explanation=f"it reads its settings only from a quantized checkpoint's config.json; vLLM "
                f"{facts.version} refuses to start", fields=(QUANTIZATION,),
                fix="serve the quantized checkpoint, or drop --quantization (or use an online method: fp8)",
                vllm_message=_missing_arguments(needs.class_name, needs.missing))
            return
        names = needs.files or ()
        present = [f for f in glob.glob(os.path.join(glob.escape(str(folder)), "*.json"))
                   if any(f.endswith(name) for name in names)]
        if present:
            return
        yield self.diagnostic(
            cfg, found, f"quantization {method!r} finds no {' or '.join(names)} in the model folder",
            explanation="nor a quantization_config in config.json; vLLM "
            f"{facts.version} refuses to start", fields=(QUANTIZATION,),
            fix="serve the quantized checkpoint, or drop --quantization (or use an online method: fp8)",
            vllm_message=messages.QUANTIZATION_CONFIG_NOT_FOUND.format(method=method))


def _missing_arguments(cls: str, names: Sequence[str]) -> str:
    """Python's TypeError text for `cls()` without its required arguments."""
    quoted = [f"'{n}'" for n in names]
    listed = quoted[0] if len(quoted) == 1 else " and ".join(quoted) if len(quoted) == 2 else \
        ", ".join(quoted[:-1]) + ", and " + quoted[-1]
    plural = "argument" if len(names) == 1 else "arguments"
    return f"{cls}.__init__() missing {len(names)} required positional {plural}: {listed}"
