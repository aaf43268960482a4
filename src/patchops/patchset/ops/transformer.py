"""transformer: run a libcst transformer named by the patchset, for rewrites no op covers."""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Tuple, Union

from packaging.specifiers import SpecifierSet

from patchops.patchset.ops.base import (Op, OpOutcome, Site, SiteCount, SiteState, file_param, param,
                               sites_param, versions_param)

if TYPE_CHECKING:
    import libcst


@dataclass(frozen=True)
class Transformer(Op):
    """Run the libcst transformer `callable` (`package.module:ClassName`) built with `params`.

    The class is a `libcst.CSTTransformer` constructed as `ClassName(**params)`. It reports
    each site by appending a `Site` to its `sites` list attribute, usually with
    `site_for(self, node, state)`, which needs `METADATA_DEPENDENCIES = (PositionProvider,)`.
    It rewrites pristine sites only; patchops checks the site count, and drops the result
    when a site drifted, as for every op. The module is imported when the op runs, not when
    the patchset loads, so that loading stays free of libcst.
    """

    name: ClassVar[str] = "transformer"

    file: str = file_param()
    sites: SiteCount = sites_param()
    callable: str = param("callable", "the transformer class, package.module:ClassName")
    params: Tuple[Tuple[str, Any], ...] = param("mapping", "keyword arguments for the class", ())
    vllm: SpecifierSet = versions_param()

    def check(self) -> None:
        """Require the transformer's module to exist (without importing it)."""
        module = self.callable.split(":", 1)[0]
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError) as exc:
            raise ValueError(f"cannot find module {module!r} of {self.callable!r}: {exc}") from None
        if spec is None:
            raise ValueError(f"cannot find module {module!r} of {self.callable!r}; "
                             "is it installed or on PYTHONPATH?")

    def describe(self) -> str:
        """Name the transformer class."""
        return f"{self.name} {self.callable}"

    def rewrite(self, module: "libcst.Module") -> OpOutcome:
        """Run the transformer; return its module and sites, or the module untouched on trouble."""
        import libcst as cst
        from libcst.metadata import MetadataWrapper

        try:
            cls = _load(self.callable)
            instance = cls(**dict(self.params))
            if not isinstance(instance, cst.CSTTransformer):
                return OpOutcome(module, (), f"{self.describe()} is not a libcst.CSTTransformer")
            if not isinstance(getattr(instance, "sites", None), list):
                instance.sites = []
            new = MetadataWrapper(module, unsafe_skip_copy=True).visit(instance)
        except Exception as exc:  # user code: report, never raise into the transaction
            return OpOutcome(module, (), f"{self.describe()} failed: {type(exc).__name__}: {exc}")
        sites = instance.sites
        if not all(isinstance(site, Site) for site in sites):
            return OpOutcome(module, (), f"{self.describe()} put something other than Site in .sites")
        sites = tuple(sorted(sites, key=lambda s: (s.line, s.column)))
        if len(sites) not in self.sites:
            return OpOutcome(module, sites, f"{self.describe()} matched {len(sites)} sites, "
                                            f"expected {self.sites}")
        states = {site.state for site in sites}
        if SiteState.DRIFT in states or SiteState.PRISTINE not in states:
            return OpOutcome(module, sites)
        return OpOutcome(new, sites)


def _load(path: str) -> type:
    module_name, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def site_for(transformer: "libcst.CSTTransformer", node: "libcst.CSTNode",
             state: Union[SiteState, str]) -> Site:
    """Return the Site of `node` for a transformer op; found is the node's source text."""
    import libcst as cst
    from libcst.metadata import PositionProvider

    where = transformer.get_metadata(PositionProvider, node).start
    return Site(where.line, where.column + 1, SiteState(state), cst.Module([]).code_for_node(node))
