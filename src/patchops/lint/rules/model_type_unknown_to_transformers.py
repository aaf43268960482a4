"""PO313 model-type-unknown-to-transformers."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import architectures

# config.json of openai/gpt-oss-20b (model type gpt_oss, transformers 4.55+).
GPT_OSS = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss"}
REMOTE = {"architectures": ["CustomForCausalLM"], "model_type": "custom",
          "auto_map": {"AutoConfig": "configuration_custom.CustomConfig"}}
# The transformers 4.51.3 that `pip install vllm==0.8.5` brought on its release day, cut to
# the types these examples need, and a later one that knows gpt-oss.
OLD = {"transformers": {"version": "4.51.3", "model_types": ["llama", "qwen2"]}}
NEW = {"transformers": {"version": "4.55.4", "model_types": ["gpt_oss", "llama", "qwen2"]}}


class ModelTypeUnknownToTransformers(Rule):
    """
    ## What it does
    Flags a model whose config.json `model_type` the transformers installed beside the vLLM
    copy does not know, when vLLM has no config class of its own for it (`_CONFIG_REGISTRY`
    in transformers_utils/config.py). Both lists are read from the copy and its site-packages
    (transformers' `CONFIG_MAPPING_NAMES`) when the copy is inspected (`patchops lint --vllm
    PATH`, or the copy that wins the import). With only a release (shipped facts), the
    transformers an install of it took on its release day stands in (the newest that its
    Requires-Dist allowed a few days after the upload): lint the copy itself when yours is
    newer.

    ## Why is this bad?
    vLLM's `get_config` hands the file to transformers' `AutoConfig`, which refuses while vLLM
    builds the model config: "ValueError: The checkpoint you are trying to load has model type
    `gpt_oss` but Transformers does not recognize this architecture. This could be because of
    an issue with the checkpoint, or because your version of Transformers is out of date."
    It happens to a checkpoint newer than the transformers the release was installed with:
    gpt-oss (transformers 4.55) on vLLM 0.8.5, installed with transformers 4.51. A config
    whose `auto_map` names an AutoConfig loads that class with `--trust-remote-code` instead
    (without it: remote-code-needs-trust).

    ## Fix
    Upgrade transformers beside vLLM to a release that knows the model type (if this vLLM
    accepts it), or use a vLLM release whose transformers does.
    """

    code = "PO313"
    name = "model-type-unknown-to-transformers"
    versions = ">=0"
    vllm_message = ("The checkpoint you are trying to load has model type `<model_type>` but Transformers "
                    "does not recognize this architecture.")
    needs = Needs(model=True)
    VALID = [
        Example("model: /models/gpt-oss-20b\n", vllm="0.10.1.1", model=GPT_OSS, facts=NEW),
        # vLLM 0.8.5 builds Cohere 2's config itself (its own Cohere2Config), whatever transformers knows.
        Example("model: /models/c4ai-command-r7b\n", vllm="0.8.5",
                model={"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2"}, facts=OLD),
        Example("vllm serve /models/custom --trust-remote-code\n", kind="command", model=REMOTE, facts=OLD),
    ]
    INVALID = [
        Example("model: /models/gpt-oss-20b\nargs:\n  max-model-len: 8192\n", vllm="0.8.5",
                model=GPT_OSS, facts=OLD, at=(1, 1)),
        # Shipped facts: vLLM 0.8.5 installed on its release day took transformers 4.51.3.
        Example("model: /models/gpt-oss-20b\n", vllm="0.8.5", model=GPT_OSS, at=(1, 1)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        kind = architectures.unknown_model_type(cfg, facts)
        if kind is None:
            return
        installed = facts.transformers.version or "?"
        day = facts.transformers.resolved_on
        which = (f"the transformers {installed} that an install of vLLM {facts.version} took on its release "
                 f"day ({day}; lint the copy itself if yours is newer)" if day
                 else f"the transformers {installed} beside vLLM {facts.version}")
        yield self.diagnostic(
            cfg, cfg.model,
            f"model type '{kind}' is unknown to transformers {installed} and to vLLM {facts.version}",
            explanation=f"{which} does not know the model type (config.json model_type) and vLLM has "
            "no config class of its own for it: vLLM refuses to start while it builds the model config",
            fields=("model",),
            vllm_message=(f"The checkpoint you are trying to load has model type `{kind}` but Transformers "
                          "does not recognize this architecture."),
            fix="upgrade transformers to a release that knows the model type, or use a vLLM release "
                "installed with one")
