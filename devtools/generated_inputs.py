"""Hypothesis strategies for every input patchops reads, and the promise each must keep.

Serve specs, `vllm serve --config` files, launch commands and patchsets: whatever is
generated, patchops answers with a result or a one-paragraph error naming the file (exit 2),
never a traceback or an internal error (exit 70), and writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import List

from hypothesis import strategies as st

from devtools.reliability_harness import World, run_here, tree_digest

SHIPPED = ["0.6.3.post1", "0.8.5", "0.10.1.1", "0.11.0", "0.20.0", "0.33.0"]
FLAGS = ["max-model-len", "max-num-batched-tokens", "enable-chunked-prefill", "num-scheduler-steps",
         "block-size", "tensor-parallel-size", "cuda-graph-sizes", "enforce-eager", "gpu-memory-utilization",
         "compilation-config", "max-num-seqs", "dtype", "kv-cache-dtype", "quantization", "model"]
# Text YAML and shells meet: surrogates, NULs, quotes, braces, very long runs.
TEXT = st.one_of(st.text(max_size=12), st.sampled_from(["\ud800", "\udfff", "\x00", "'", '"', "{", "[",
                                                         "-1", "1e309", "nan", "yes", "~", "0x10", "8k"]))
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True), TEXT)
VALUE = st.recursive(SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(TEXT, inner, max_size=3)), max_leaves=8)
ARGS = st.dictionaries(st.one_of(st.sampled_from(FLAGS), TEXT), VALUE, max_size=6)
VERSION = st.one_of(st.sampled_from(SHIPPED), TEXT)
SPEC = st.fixed_dictionaries({}, optional={
    "model": VALUE, "vllm": st.one_of(st.fixed_dictionaries({"version": VERSION}), VALUE),
    "args": st.one_of(ARGS, VALUE), "env": VALUE, "hardware": VALUE, "workload": VALUE,
})
# JSON is YAML, and json.dumps writes a lone surrogate as the escape YAML reads back.
SPEC_TEXT = st.one_of(SPEC.map(json.dumps), st.text(max_size=80),
                      st.integers(1, 400).map(lambda n: "a: " + "[" * n + "]" * n))
CONFIG_TEXT = st.one_of(ARGS.map(json.dumps), st.text(max_size=80))
COMMAND = st.lists(st.one_of(st.sampled_from(["--" + f for f in FLAGS]), TEXT, st.sampled_from(
    ["-tp", "4", "=", "\\", "'", '"', "$(x)", "VLLM_ATTENTION_BACKEND=XFORMERS", "&&"])),
    max_size=8).map(lambda words: "vllm serve m " + " ".join(words))

OP_KEYS = ["op", "file", "sites", "marker", "before", "code", "scope", "callee", "keyword", "value",
           "vllm", "callable", "params", "name", "decorator", "target"]
OPS = st.one_of(st.sampled_from(["insert-code", "set-keyword", "set-default", "add-decorator",
                                 "transformer", "nope"]), TEXT)
OP = st.dictionaries(st.sampled_from(OP_KEYS), st.one_of(OPS, VALUE, st.sampled_from(
    ["logger.py", "../x.py", "/etc/passwd", "evil/x.py", "init_logger", "1", ">=1", "X = 1\n"])),
    max_size=7)
PATCHSET = st.fixed_dictionaries({"name": st.one_of(st.just("gen"), TEXT)}, optional={
    "summary": VALUE, "vllm": st.one_of(st.just(">=0.6"), VALUE), "ops": st.one_of(st.lists(OP, max_size=3), VALUE),
    "description": VALUE, "extra": VALUE})
PATCHSET_TEXT = st.one_of(PATCHSET.map(json.dumps), st.text(max_size=80),
                          st.integers(1, 400).map(lambda n: "name: gen\nops: " + "[" * n + "]" * n))


def promise(code: int, out: str, err: str, path: str, ok: tuple) -> List[str]:
    """Return what is wrong with one run's result: an internal error, a traceback, an exit
    outside `ok` (plus 2), or an exit 2 whose message does not name the input."""
    problems = []
    if code == 70 or "Traceback" in err or "internal error" in err:
        problems.append(f"internal error: {err.strip()[:300]}")
    elif code not in (*ok, 2):
        problems.append(f"exit {code}: {err.strip()[:300]}")
    elif code == 2 and path not in err + out:  # lint reports unreadable input as PO003
        problems.append(f"exit 2 without naming {path}: {(err or out).strip()[:300]}")
    return problems


def check_lint(folder: Path, text: str, *, kind: str = "serve.yaml") -> List[str]:
    """Lint generated file text; return broken promises."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / kind
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = tree_digest(folder)
    done = run_here(_NO_WORLD, ["lint", str(path), "--vllm-version", "0.11.0"] if kind != "serve.yaml"
                    else ["lint", str(path)])
    problems = promise(done.returncode, done.stdout, done.stderr, str(path), (0, 1))
    if tree_digest(folder) != before:
        problems.append("lint wrote a file")
    return problems


def check_command(folder: Path, command: str) -> List[str]:
    folder.mkdir(parents=True, exist_ok=True)
    before = tree_digest(folder)
    done = run_here(_NO_WORLD, ["lint", "--cmd", command, "--vllm-version", "0.11.0"])
    problems = promise(done.returncode, done.stdout, done.stderr, "<command>", (0, 1))
    if tree_digest(folder) != before:
        problems.append("lint wrote a file")
    return problems


def check_patchset(world: World, text: str) -> List[str]:
    """Load a generated patchset beside the world's and dry-run it; return broken promises."""
    path = world.patchsets / "gen.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = tree_digest(world.root)
    listed = run_here(_NO_WORLD, ["patchsets", "--patchsets", str(world.patchsets)])
    problems = promise(listed.returncode, listed.stdout, listed.stderr, str(path), (0,))
    if listed.returncode == 0:
        dry = run_here(world, ["apply", "gen", "--dry-run"])
        problems += promise(dry.returncode, dry.stdout, dry.stderr, str(path), (0, 3))
        if dry.returncode == 4 and "symbolic link" not in dry.stderr:
            problems.append(f"exit 4: {dry.stderr.strip()[:300]}")
    if tree_digest(world.root) != before:
        problems.append("a patchset load or dry run wrote a file")
    path.unlink()
    return problems


class _NoWorld:
    def site_args(self):
        return []


_NO_WORLD = _NoWorld()
