"""replace-function: fingerprints, the three site states, and real model runners of two versions."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from tests.support import wheelcache
from patchops.patchset.ops import ReplaceFunction, SiteState
from patchops.patchset.ops.replace_function import fingerprint
from rewrite_assert import assert_rewrite, run_op

BEFORE = '''\
import time


class Runner:
    # the hot loop
    @torch.inference_mode()
    def step(self, batch, n: int = 1):
        """One step."""
        return self.model(batch)  # forward

    async def close(self):
        pass
'''
ORIGINAL_STEP = '''\
@torch.inference_mode()
def step(self, batch, n: int = 1):
    """One step."""
    return self.model(batch)  # forward
'''
NEW_STEP = '''\
@torch.inference_mode()
def step(self, batch, n: int = 1):
    """One step."""
    start = time.perf_counter()
    out = self.model(batch)  # forward
    print("step", time.perf_counter() - start)
    return out
'''


def op(**over):
    params = dict(file="worker/runner.py", sites=1, scope="Runner.step",
                  original=fingerprint(ORIGINAL_STEP), code=NEW_STEP)
    params.update(over)
    return ReplaceFunction(**params)


def test_fingerprint_ignores_layout_and_comments_but_not_code():
    base = fingerprint(ORIGINAL_STEP)
    assert base.startswith("ast1-") and len(base) == 21
    relaid = ('@torch.inference_mode( )\ndef step(self,\n         batch, n: int=1):\n'
              '    """One step."""\n\n    # a comment\n    return self.model(\n        batch)\n')
    assert fingerprint(relaid) == base
    assert fingerprint(textwrap.indent(ORIGINAL_STEP, "    ")) == base
    for change in (("n: int = 1", "n: int = 2"), ('"""One step."""', '"""A step."""'),
                   ("@torch.inference_mode()", "@torch.no_grad()"), ("batch)", "batch, n)")):
        assert fingerprint(ORIGINAL_STEP.replace(*change)) != base, change


def test_rewrite_keeps_comments_above_and_the_rest_of_the_file():
    assert_rewrite(op(), before=BEFORE,
                   after=BEFORE.replace(ORIGINAL_STEP.replace("\n", "\n    ").rstrip(" "),
                                        NEW_STEP.replace("\n", "\n    ").rstrip(" "), 1))


def test_async_method():
    original = "async def close(self):\n    pass\n"
    new = "async def close(self):\n    await self.flush()\n"
    done = assert_rewrite(op(scope="Runner.close", original=fingerprint(original), code=new),
                          before=BEFORE, after=BEFORE.replace("        pass\n", "        await self.flush()\n"))
    assert done.states == (SiteState.PRISTINE,)


def test_a_different_function_is_drift_and_names_the_mismatch():
    other = BEFORE.replace("return self.model(batch)", "return self.model(batch, n)")
    out = run_op(op(), other)
    assert out.states == (SiteState.DRIFT,)
    assert out.module.code == other
    [site] = out.sites
    assert (site.line, site.column) == (7, 5)  # the `def` line, as libcst positions a definition
    message = op().explain(site)
    assert "does not match this file" in message and fingerprint(ORIGINAL_STEP) in message


def test_absent_function_matches_zero_sites():
    out = run_op(op(scope="Runner.missing", code=NEW_STEP.replace("def step", "def missing")), BEFORE)
    assert out.sites == () and out.error == "replace-function Runner.missing matched 0 sites, expected 1"


def test_other_definitions_of_the_name_are_not_sites_when_one_matches():
    source = BEFORE.replace("    async def close", "    @step.setter\n    def step(self, value):\n"
                            "        self._step = value\n\n    async def close")
    out = run_op(op(), source)
    assert out.states == (SiteState.PRISTINE,)
    drifted = run_op(op(original=fingerprint("def step(self):\n    return 0\n")), source)
    assert drifted.states == (SiteState.DRIFT, SiteState.DRIFT)


@pytest.mark.parametrize("over, says", [
    ({"original": "0123456789abcdef"}, "is not a fingerprint"),
    ({"code": "def step(self):\n    pass\ndef other():\n    pass\n"}, "exactly one function"),
    ({"code": "x = 1\n"}, "exactly one function"),
    ({"code": NEW_STEP.replace("def step", "def stop")}, "code defines 'stop'"),
    ({"code": ORIGINAL_STEP + "\n# only a comment\n"}, "nothing to replace"),
])
def test_parameters_are_checked(over, says):
    with pytest.raises(ValueError, match=says):
        op(**over)


# --- real vLLM files ---------------------------------------------------------------------------

RUNNER = "v1/worker/gpu_model_runner.py"
SCOPE = "GPUModelRunner.execute_model"


def real(version: str) -> str:
    return (wheelcache.site_packages(version) / "vllm" / RUNNER).read_text()


def method_text(text: str) -> str:
    """Return GPUModelRunner.execute_model as the op reads it: libcst's text of the definition."""
    module = cst.parse_module(text)
    cls = next(n for n in module.body if isinstance(n, cst.ClassDef) and n.name.value == "GPUModelRunner")
    fn = next(n for n in cls.body.body if isinstance(n, cst.FunctionDef) and n.name.value == "execute_model")
    return module.code_for_node(fn.with_changes(leading_lines=()))


def hand_timed(text: str) -> str:
    """Edit the file as a user would: one line at the top of execute_model's body."""
    tree = ast.parse(text)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "GPUModelRunner")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "execute_model")
    first = fn.body[0]
    lines = text.splitlines(keepends=True)
    lines.insert(first.lineno - 1, " " * first.col_offset + "print('step')  # timing, by hand\n")
    return "".join(lines)


@pytest.mark.parametrize("version", ["0.11.0", "0.33.0"])
def test_real_model_runner_replaced_then_satisfied(version):
    text = real(version)
    edited = hand_timed(text)
    replacement = ReplaceFunction(file=RUNNER, sites=1, scope=SCOPE,
                                  original=fingerprint(method_text(text)), code=method_text(edited))
    out = replacement.rewrite(cst.parse_module(text))
    assert out.error is None and out.states == (SiteState.PRISTINE,)
    assert out.module.code == edited  # byte for byte the hand edit
    again = replacement.rewrite(cst.parse_module(edited))
    assert again.states == (SiteState.SATISFIED,) and again.module.code == edited


def test_real_model_runner_of_another_version_is_drift():
    newest = real("0.33.0")
    replacement = ReplaceFunction(file=RUNNER, sites=1, scope=SCOPE,
                                  original=fingerprint(method_text(newest)),
                                  code=method_text(hand_timed(newest)))
    text = real("0.11.0")
    out = replacement.rewrite(cst.parse_module(text))
    assert out.states == (SiteState.DRIFT,) and out.module.code == text
