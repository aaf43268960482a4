"""A model's small config files from the Hugging Face Hub, fetched as vLLM fetches them.

vLLM reads `config.json` (and a few files beside it) through `huggingface_hub` into the
standard Hugging Face cache before it builds its config. Lint fetches the same files with the
same client into the same cache, so vLLM later finds them there: never weights. What is
already cached answers without a request; `HF_HUB_OFFLINE` means no request at all. The Hub
gets a short total budget: a stalled or unreachable Hub is a note, not a hung lint.
"""

from __future__ import annotations

import os
import threading
from typing import Dict, Mapping, Optional, Sequence, Tuple

from patchops.core.records import field, record

# The files vLLM's config stage reads where they exist (transformers_utils/config.py: the
# config, the generation defaults, the tokenizer's limits; model_executor's quantization
# files; params.json of Mistral-format repos).
MODEL_FILES = ("config.json", "generation_config.json", "tokenizer_config.json",
               "quantize_config.json", "hf_quant_config.json", "params.json")
BUDGET_SECONDS = 5.0
TRUE_WORDS = ("1", "on", "yes", "true")


@record(frozen=True)
class HubFetch:
    """What the Hub (or the cache) gave for one model: local paths, or why there are none.

    `problem` is None when config.json is here, else "offline", "gated", "missing",
    "revision", "no-config", "network", "stalled" or "no-client"; `reason` and `hint` then say, in a few
    words each, what happened and what to do. `asked` is whether a request went out.
    """

    model: str
    revision: Optional[str] = None
    files: Dict[str, str] = field(default_factory=dict)   # file name -> path in the HF cache
    problem: Optional[str] = None
    reason: str = ""
    hint: str = ""
    asked: bool = False


def cache_dir(env: Mapping[str, str]) -> str:
    """Return the Hugging Face hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub."""
    home = env.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return env.get("HF_HUB_CACHE") or os.path.join(home, "hub")


def is_offline(env: Mapping[str, str]) -> bool:
    """Return whether `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`) forbids requests."""
    return any(env.get(name, "").strip().lower() in TRUE_WORDS
               for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"))


def fetch(model: str, env: Mapping[str, str], *, revision: Optional[str] = None,
          files: Sequence[str] = MODEL_FILES, budget: float = BUDGET_SECONDS) -> HubFetch:
    """Return `files` of hub repo `model` at `revision`: from the cache, else from the Hub.

    `env` is the launch's environment (HF_TOKEN, HF_ENDPOINT, HF_HOME, HF_HUB_CACHE,
    HF_HUB_OFFLINE). The files absent from the repo are left out; config.json decides
    `problem`. Every request shares `budget` seconds.
    """
    try:
        import huggingface_hub
        from huggingface_hub.utils import disable_progress_bars, logging
    except ImportError:
        return HubFetch(model, revision, problem="no-client",
                        reason="huggingface_hub is not installed, so the Hub was not asked",
                        hint="pip install huggingface_hub")
    disable_progress_bars()
    logging.set_verbosity_error()  # its "Retrying in 4s" lines: the note below says it once
    cache, found, wanted = cache_dir(env), {}, []
    for name in files:
        try:
            local = huggingface_hub.try_to_load_from_cache(model, name, cache_dir=cache, revision=revision)
        except ValueError:  # not a repo id the Hub accepts (HFValidationError)
            return _outcome(model, revision, env, {}, "missing", budget, asked=False)
        if isinstance(local, str):
            found[name] = local
        elif local is None:  # not known here (the other answer: known to be absent)
            wanted.append(name)
    if "config.json" in found or "config.json" not in wanted:
        problem = None if "config.json" in found else "no-config"
        return _outcome(model, revision, env, found, problem, budget, asked=False)
    if is_offline(env):
        return _outcome(model, revision, env, found, "offline", budget, asked=False)
    answers = _download_all(huggingface_hub, model, wanted, env, cache, revision, budget)
    problem = None
    for name in wanted:
        answer = answers.get(name)
        if isinstance(answer, str):
            found[name] = answer
        elif name == "config.json":
            problem = "stalled" if answer is None else _problem_of(answer)
    return _outcome(model, revision, env, found, problem, budget, asked=True)


def _download_all(huggingface_hub, model, names, env, cache, revision, budget) -> Dict[str, object]:
    """Return name -> local path or the exception, for the downloads done within `budget`.

    One daemon thread downloads the files in turn, config.json first (the others only when
    the Hub answered for it): the client retries a timed-out request with a longer timeout of
    its own, and a thread still waiting when the budget runs out is left behind, never waited
    for (not even at exit).
    """
    answers: Dict[str, object] = {}

    def download() -> None:
        for name in sorted(names, key=lambda n: n != "config.json"):
            try:
                answers[name] = huggingface_hub.hf_hub_download(
                    model, name, revision=revision, cache_dir=cache, endpoint=env.get("HF_ENDPOINT") or None,
                    token=env.get("HF_TOKEN") or None, etag_timeout=budget)
            except Exception as error:  # every failure is an answer: classified by _problem_of
                answers[name] = error
                if name == "config.json" and _problem_of(error) != "no-config":
                    return  # the repo or the Hub refused: the other files would fare the same

    thread = threading.Thread(target=download, daemon=True)
    thread.start()
    thread.join(budget)
    return dict(answers)


def _problem_of(error: BaseException) -> str:
    """Return the problem a failed config.json download stands for."""
    from huggingface_hub import utils

    if isinstance(error, utils.GatedRepoError):
        return "gated"
    if isinstance(error, utils.RepositoryNotFoundError):
        return "missing"
    if isinstance(error, utils.RevisionNotFoundError):
        return "revision"
    if isinstance(error, utils.LocalEntryNotFoundError):
        return "offline" if _offline_cause(error) else "network"
    if isinstance(error, utils.EntryNotFoundError):
        return "no-config"
    return "network"


def _offline_cause(error: BaseException) -> bool:
    from huggingface_hub.errors import OfflineModeIsEnabled

    cause = error.__cause__
    return isinstance(cause, OfflineModeIsEnabled) or "outgoing traffic has been disabled" in str(error)


def _outcome(model: str, revision: Optional[str], env: Mapping[str, str], found: Dict[str, str],
             problem: Optional[str], budget: float, *, asked: bool) -> HubFetch:
    reason, hint = _words(model, revision, env, problem, budget) if problem else ("", "")
    return HubFetch(model, revision, found, problem, reason, hint, asked)


def _words(model: str, revision: Optional[str], env: Mapping[str, str], problem: str,
           budget: float) -> Tuple[str, str]:
    """Return (what happened, what to do) for a config.json that could not be had."""
    given = f"pass --model-config {model}=FILE"
    endpoint = env.get("HF_ENDPOINT") or "https://huggingface.co"
    at = f"@{revision}" if revision else ""
    return {
        "offline": (f"HF_HUB_OFFLINE is set and {model}'s config.json is not in the Hugging Face cache "
                    f"({cache_dir(env)})", f"fetch it once online, or {given}"),
        "gated": (f"{model} is gated: the Hub refused its config.json without a token that has access",
                  f"accept its terms on the Hub and set HF_TOKEN, or {given}"),
        "missing": (f"the Hub has no model {model} (or it is private)",
                    f"check the name (a private model needs HF_TOKEN), or {given}"),
        "revision": (f"{model} has no revision {revision}", f"check --revision, or {given}"),
        "no-config": (f"{model}{at} has no config.json on the Hub", given),
        "network": (f"the Hub at {endpoint} could not be reached for {model}'s config.json",
                    f"check the network and HF_ENDPOINT, or {given}"),
        "stalled": (f"the Hub at {endpoint} did not answer for {model}'s config.json within "
                    f"{budget:g} s (unreachable or stalled)", f"try again, or lint with --no-fetch, or {given}"),
    }[problem]
