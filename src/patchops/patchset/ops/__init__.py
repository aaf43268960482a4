"""The rewrite ops a patchset can use, one per module, listed here by name.

Importing the ops does not import libcst; each op imports it when it rewrites.
"""

from __future__ import annotations

from typing import Dict, Tuple, Type

from patchops.patchset.ops.add_decorator import AddDecorator
from patchops.patchset.ops.base import Op, OpExample, OpOutcome, Site, SiteCount, SiteState
from patchops.patchset.ops.insert_code import InsertCode
from patchops.patchset.ops.replace_function import ReplaceFunction
from patchops.patchset.ops.set_default import SetDefault
from patchops.patchset.ops.set_keyword import SetKeyword
from patchops.patchset.ops.transformer import Transformer, site_for

# Sorted by name; tests/patchset/ops/test_registry.py checks it.
ALL_OPS: Tuple[Type[Op], ...] = (AddDecorator, InsertCode, ReplaceFunction, SetDefault, SetKeyword,
                                  Transformer)
OPS: Dict[str, Type[Op]] = {op.name: op for op in ALL_OPS}

__all__ = ["ALL_OPS", "OPS", "AddDecorator", "InsertCode", "Op", "OpExample", "OpOutcome",
           "ReplaceFunction", "SetDefault", "SetKeyword", "Site", "SiteCount", "SiteState", "Transformer", "site_for"]
