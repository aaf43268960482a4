"""PO319 mistral-config-not-found."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, local_files, messages
from patchops.lint.vllm.local_files import CONFIG_FORMAT, MISTRAL_FORMAT, MISTRAL_PARAMS_FILE

# A local folder both here (tests run from the repository root) and in the conformance corpus.
FOLDER = "tests/conformance/corpus/models/Mistral-7B-v0.1"


class MistralConfigNotFound(Rule):
    """
    ## What it does
    Flags `--config-format mistral` on a local model folder that holds no `params.json`
    (a Hugging Face checkpoint, with `config.json`). The releases checked are those whose
    `--config-format` offers `mistral` (read from the copy's argparse facts); a hub name is not
    checked, since vLLM downloads the file.

    ## Why is this bad?
    With `mistral`, vLLM reads the model's shape only from `params.json` and refuses to build
    its config: "Failed to load mistral 'params.json' config for model ... Please check if the
    model is a mistral-format model and if the config file exists." Where vLLM then asks the
    hub for the file with the folder path as a repo id (0.8.5, or online), the refusal reads
    "HFValidationError: Repo id must be in the form 'repo_name' or 'namespace/repo_name'".
    The flag is usually copied from a Mistral model card (with `--tokenizer-mode mistral
    --load-format mistral`) onto the Hugging Face format of the same model.

    ## Fix
    Drop `config-format` (`auto` reads config.json, or params.json when config.json is
    absent), or serve the checkpoint in Mistral's own format.
    """

    code = "PO319"
    name = "mistral-config-not-found"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.MISTRAL_CONFIG_NOT_FOUND
    VALID = [
        Example(f"model: {FOLDER}\nargs:\n  config-format: hf\n"),
        Example(f"model: {FOLDER}\nargs:\n  config-format: auto\n", vllm="0.33.0"),
        Example("model: mistralai/Mistral-7B-Instruct-v0.3\nargs:\n  config-format: mistral\n"),
    ]
    INVALID = [
        Example(f"model: {FOLDER}\nargs:\n  config-format: mistral\n", at=(3, 3)),
        Example(f"vllm serve {FOLDER} --config-format mistral\n", kind="command", vllm="0.33.0",
                at=(1, 13 + len(FOLDER))),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, CONFIG_FORMAT)
        if found is None or not isinstance(found.value, str) or found.value.lower() != MISTRAL_FORMAT:
            return
        if MISTRAL_FORMAT not in _offered(facts):
            return
        folder = local_files.local_model_folder(cfg)
        if folder is None or (folder / MISTRAL_PARAMS_FILE).is_file():
            return
        yield self.diagnostic(
            cfg, found,
            f"config_format {MISTRAL_FORMAT!r} needs {MISTRAL_PARAMS_FILE}, and the model folder has none",
            explanation=f"a Hugging Face checkpoint has no {MISTRAL_PARAMS_FILE}; vLLM {facts.version} refuses "
            "to start", fields=(CONFIG_FORMAT,),
            fix="drop config-format (auto reads config.json), or serve the mistral-format checkpoint",
            vllm_message=messages.MISTRAL_CONFIG_NOT_FOUND.format(model=cfg.model.value))


def _offered(facts: Facts) -> tuple:
    """Return the formats the copy's `--config-format` accepts (choices or a Literal's values)."""
    flag = facts.flags.get(CONFIG_FORMAT)
    if flag is None:
        return ()
    return tuple(flag.choices or flag.known_values or ())
