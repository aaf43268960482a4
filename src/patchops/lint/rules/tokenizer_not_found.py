"""PO908 tokenizer-not-found."""

from __future__ import annotations

import re
from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, local_files, messages, releases
from patchops.lint.vllm.local_files import REPO_ID, REPO_ID_MAX, TOKENIZER

MISSING = "/nonexistent/patchops-example/tokenizer"


class TokenizerNotFound(Rule):
    """
    ## What it does
    Flags a `--tokenizer` that is no folder on this machine (tried as written and from the
    input's folder) and cannot be a Hugging Face repo id either (an absolute or `./` path,
    `~`, `..`, more than one `/`: what `huggingface_hub`'s `validate_repo_id` refuses). A name
    the hub could hold (`org/name`) is flagged only offline (`HF_HUB_OFFLINE` or
    `TRANSFORMERS_OFFLINE` in the launch's or this environment) when the Hugging Face cache
    holds no snapshot of it; a cloud URI (`s3://...`) never.

    ## Why is this bad?
    vLLM cannot load the tokenizer, takes the path for a repo id, and stops: "Repo id must be
    in the form 'repo_name' or 'namespace/repo_name': '/models/tok'". From 0.12 with
    `HF_HUB_OFFLINE=1` (air-gapped servers) that happens while the arguments are read, before
    the engine config; otherwise when the tokenizer loads at start-up (a later stage). Offline,
    a repo id that was never downloaded stops there too: "Cannot find an appropriate cached
    snapshot folder for the specified revision on the local disk and outgoing traffic has been
    disabled."

    ## Fix
    Point `--tokenizer` at the tokenizer's folder on the machine that runs vLLM, or drop it
    (the model's folder holds its tokenizer).
    """

    code = "PO908"
    name = "tokenizer-not-found"
    severity = "error"
    versions = ">=0"
    vllm_message = messages.TOKENIZER_REPO_ID_INVALID
    VALID = [
        Example("model: m\nargs:\n  tokenizer: Qwen/Qwen2.5-7B-Instruct\n"),
        Example("vllm serve m --tokenizer tests/conformance/corpus/models/Qwen2.5-7B-Instruct\n",
                kind="command", vllm="0.33.0"),
    ]
    INVALID = [
        Example(f"model: m\nargs:\n  tokenizer: {MISSING}\n", at=(3, 3)),
        Example(f"vllm serve m --tokenizer {MISSING}\n", kind="command", vllm="0.33.0", at=(1, 14)),
    ]

    @classmethod
    def stage_in(cls, version: str) -> str:
        """0.12+ resolve the tokenizer in EngineArgs under HF_HUB_OFFLINE; before, it loads later."""
        return "config" if releases.release(version) >= releases.TOKENIZER_RESOLVED_OFFLINE else "later"

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        found = inputs.setting(cfg, TOKENIZER)
        if found is None or not isinstance(found.value, str) or not found.value:
            return
        value = found.value
        if "://" in value or local_files.local_path(cfg, value) is not None:
            return
        if _could_be_repo_id(value):
            yield from self._not_cached(cfg, facts, found, value)
            return
        yield self.diagnostic(
            cfg, found, f"tokenizer {value!r} is no folder here and no Hugging Face repo id",
            explanation=f"vLLM {facts.version} cannot load it and refuses to start",
            fields=(TOKENIZER,), fix="point tokenizer at the tokenizer's folder, or drop it",
            vllm_message=messages.TOKENIZER_REPO_ID_INVALID.format(value=value))

    def _not_cached(self, cfg: ReadConfig, facts: Facts, found: Setting, repo_id: str) -> Iterator[Diagnostic]:
        """Offline, the repo id is looked up in the cache only (0.12+: in EngineArgs, before: at start-up)."""
        snapshots = local_files.offline_snapshots(cfg, repo_id)
        if snapshots is None or snapshots.is_dir() and any(snapshots.iterdir()):
            return
        yield self.diagnostic(
            cfg, found, f"tokenizer {repo_id!r} is not in the Hugging Face cache, and vLLM runs offline",
            explanation=f"it is no folder on this machine and the Hugging Face cache ({snapshots.parent}) "
            f"holds no copy of it, so offline vLLM {facts.version} refuses to start",
            fields=(TOKENIZER,), fix="download it into the cache, point tokenizer at its folder, or drop it",
            vllm_message=messages.TOKENIZER_NOT_CACHED)


def _could_be_repo_id(value: str) -> bool:
    return (len(value) <= REPO_ID_MAX and REPO_ID.match(value) is not None and "--" not in value
            and ".." not in value and not value.endswith(".git"))
