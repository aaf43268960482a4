"""set-default and transformer on real vLLM files from PyPI wheels, two versions each.

(set-keyword, insert-code and add-decorator run on real files through the shipped patchsets:
tests/patchset/test_shipped_patchsets.py.)
"""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import PositionProvider

from patchops.patchset.ops import SetDefault, SiteState, Transformer, site_for
from tests.support import wheelcache

ARG_UTILS = "engine/arg_utils.py"

# EngineArgs.enforce_eager as each release declares it (vllm/engine/arg_utils.py).
UPSTREAM_DEFAULT = {"0.6.3.post1": "None", "0.11.0": "ModelConfig.enforce_eager"}


def real_module(version: str) -> cst.Module:
    return cst.parse_module((wheelcache.site_packages(version) / "vllm" / ARG_UTILS).read_text())


def fork_default(module: cst.Module, upstream: str) -> cst.Module:
    """Give EngineArgs.enforce_eager the fork's default True, as a vendor might."""
    text = module.code
    line = next(l for l in text.splitlines() if l.strip().startswith("enforce_eager:") and upstream in l)
    return cst.parse_module(text.replace(line, line.replace(upstream, "True"), 1))


@pytest.mark.parametrize("version", sorted(UPSTREAM_DEFAULT))
def test_set_default_on_real_engine_args(version):
    upstream = UPSTREAM_DEFAULT[version]
    op = SetDefault(file=ARG_UTILS, sites=1, scope="EngineArgs", field="enforce_eager",
                    value=upstream, pristine=("True",))
    pristine = real_module(version)
    satisfied = op.rewrite(pristine)
    assert satisfied.error is None and [s.state for s in satisfied.sites] == [SiteState.SATISFIED]
    assert satisfied.module is pristine

    forked = fork_default(pristine, upstream)
    fixed = op.rewrite(forked)
    assert [s.state for s in fixed.sites] == [SiteState.PRISTINE]
    assert fixed.module.code == pristine.code  # byte-identical to upstream again


class RestoreEagerKeyword(cst.CSTTransformer):
    """The corex fix written as a user's transformer, with a list parameter."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, names):
        super().__init__()
        self.names, self.sites = list(names), []

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        if original.keyword is None or original.keyword.value not in self.names:
            return updated
        wanted = f"self.{original.keyword.value}"
        current = cst.Module([]).code_for_node(original.value)
        state = {wanted: "satisfied", "True": "pristine"}.get(current, "drift")
        self.sites.append(site_for(self, original.value, state))
        if state == "pristine":
            return updated.with_changes(value=cst.parse_expression(wanted))
        return updated


@pytest.mark.parametrize("version", ["0.8.5", "0.33.0"])
def test_transformer_on_real_engine_args(version):
    op = Transformer(file=ARG_UTILS, sites=">=2", callable=f"{__name__}:RestoreEagerKeyword",
                     params={"names": ["enforce_eager", "disable_custom_all_reduce"]})
    pristine = real_module(version)
    upstream = op.rewrite(pristine)
    assert upstream.error is None
    assert {s.state for s in upstream.sites} == {SiteState.SATISFIED}
    assert upstream.module.code == pristine.code

    vendor = cst.parse_module(pristine.code
                              .replace("enforce_eager=self.enforce_eager,", "enforce_eager=True,")
                              .replace("disable_custom_all_reduce=self.disable_custom_all_reduce,",
                                       "disable_custom_all_reduce=True,"))
    fixed = op.rewrite(vendor)
    assert [s.state for s in fixed.sites] == [SiteState.PRISTINE, SiteState.PRISTINE]
    assert fixed.module.code == pristine.code
