"""A model's small config files from the Hugging Face Hub, fetched as vLLM fetches them.

vLLM reads `config.json` (and a few files beside it) through `huggingface_hub` into the
standard Hugging Face cache before it builds its config. Lint fetches the same files with the
same client into the same cache, so vLLM later finds them there: never weights. What is
already cached answers without a request; `HF_HUB_OFFLINE` means no request at all. The Hub
gets a short total budget, in a child process killed when it runs out: a stalled or
unreachable Hub is a note, not a hung lint.
"""

from __future__ import annotations

import atexit
import json
import os
import selectors
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, Iterator, Mapping, Optional, Sequence, Tuple

from patchops.core.records import field, record

# The files vLLM's config stage reads where they exist (transformers_utils/config.py: the
# config, the generation defaults, the tokenizer's limits; model_executor's quantization
# files; params.json of Mistral-format repos).
MODEL_FILES = ("config.json", "generation_config.json", "tokenizer_config.json",
               "quantize_config.json", "hf_quant_config.json", "params.json")
BUDGET_SECONDS = 5.0
TRUE_WORDS = ("1", "on", "yes", "true")
# What the download child runs: this very patchops package, wherever the parent imported it
# from (argv[1]), with sys.path left as the interpreter sets it; then serve_child().
CHILD = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("patchops", sys.argv[1] + "/__init__.py",
                                              submodule_search_locations=[sys.argv[1]])
sys.modules["patchops"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sys.modules["patchops"])
from patchops.host import hub
hub.serve_child()
"""
PACKAGE = str(Path(__file__).resolve().parents[1])


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
    except ImportError:
        return HubFetch(model, revision, problem="no-client",
                        reason="huggingface_hub is not installed, so the Hub was not asked",
                        hint="pip install huggingface_hub")
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
    answers = _download_all(model, wanted, env, cache, revision, budget)
    problem = None
    for name in wanted:
        answer = answers.get(name, {})
        if "path" in answer:
            found[name] = answer["path"]
        elif name == "config.json":
            problem = answer.get("problem", "stalled")
    return _outcome(model, revision, env, found, problem, budget, asked=True)


def _download_all(model: str, names: Sequence[str], env: Mapping[str, str], cache: str,
                  revision: Optional[str], budget: float) -> Dict[str, Dict[str, str]]:
    """Return name -> {"path": local path} or {"problem": word}, for the downloads done within
    `budget`.

    The download child does them in turn, config.json first (the others only when the Hub
    answered for it), and is killed when the budget runs out, so no download outlives its
    fetch: huggingface_hub shares one HTTP client between every thread of a process and closes
    it when a request cannot connect, and a download left running here (its client retries for
    half a minute) broke a later fetch's request mid-read. The budget starts once the child has
    imported the client (that first, with a budget of its own): it is what the Hub may take.
    """
    request = {"model": model, "names": sorted(names, key=lambda n: n != "config.json"),
               "revision": revision, "cache": cache, "endpoint": env.get("HF_ENDPOINT") or None,
               "token": env.get("HF_TOKEN") or None, "budget": budget, "environ": dict(os.environ)}
    answers: Dict[str, Dict[str, str]] = {}
    with _Child.lock:
        child = _Child.running()
        if child.started(budget) and child.ask(request):
            for answer in child.answers(time.monotonic() + budget):
                if answer.get("done"):
                    return answers
                answers[answer.pop("name")] = answer
        child.stop()
    return answers


class _Child:
    """The download child: started by the first fetch that asks, kept for the next ones (one
    import of the client per process), stopped when a fetch's budget runs out."""

    lock = threading.Lock()
    current: Optional["_Child"] = None

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", CHILD, PACKAGE], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.unread = b""
        self.ready = False
        atexit.register(self.stop)

    @classmethod
    def running(cls) -> "_Child":
        if cls.current is None or cls.current.process.poll() is not None:
            cls.current = cls()
        return cls.current

    def started(self, budget: float) -> bool:
        """Return whether the child has imported the client, waiting up to `budget` for it."""
        if not self.ready:
            self.ready = any(a.get("ready") for a in self.answers(time.monotonic() + budget))
        return self.ready

    def ask(self, request: dict) -> bool:
        """Send one request (the token on a pipe, never on a command line); False if it died."""
        try:
            self.process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            self.process.stdin.flush()
            return True
        except OSError:
            return False

    def answers(self, deadline: float) -> Iterator[dict]:
        """Yield the child's answers, one JSON object a line, until `deadline` or its end."""
        stream = self.process.stdout
        with selectors.DefaultSelector() as selector:
            selector.register(stream, selectors.EVENT_READ)
            while True:
                while b"\n" in self.unread:
                    line, self.unread = self.unread.split(b"\n", 1)
                    yield json.loads(line)
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    return
                chunk = os.read(stream.fileno(), 65536)
                if not chunk:
                    return
                self.unread += chunk

    def stop(self) -> None:
        self.process.kill()
        self.process.wait()
        self.process.stdin.close()
        self.process.stdout.close()
        if _Child.current is self:
            _Child.current = None


def serve_child() -> None:
    """Answer the parent's requests (see _download_all), one a line on stdin, until it closes it.

    Each runs in the parent's environment as of its fetch (the token huggingface_hub finds
    without one given, its proxies), as a download in the parent itself would.
    """
    import huggingface_hub  # its progress bars and "Retrying in 4s" lines: to stderr, dropped

    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        os.environ.clear()
        os.environ.update(request["environ"])
        for name in request["names"]:
            try:
                path = huggingface_hub.hf_hub_download(
                    request["model"], name, revision=request["revision"], cache_dir=request["cache"],
                    endpoint=request["endpoint"], token=request["token"], etag_timeout=request["budget"])
                print(json.dumps({"name": name, "path": path}), flush=True)
            except Exception as error:  # every failure is an answer: classified by _problem_of
                problem = _problem_of(error)
                print(json.dumps({"name": name, "problem": problem}), flush=True)
                if name == "config.json" and problem != "no-config":
                    break  # the repo or the Hub refused: the other files would fare the same
        print(json.dumps({"done": True}), flush=True)


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
