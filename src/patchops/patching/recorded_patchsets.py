"""Load patchsets by name, falling back to the YAML a copy's store kept when it applied them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Sequence

from patchops.patching.targets import unique_targets
from patchops.store.site_store import Store

if TYPE_CHECKING:
    from patchops.host.locate import VllmCopy
    from patchops.patchset.model import Patchset


def load_patchsets(copies: Sequence["VllmCopy"], names: Sequence[str],
                   dirs: Sequence[Path] = ()) -> List["Patchset"]:
    """Load patchsets by name, falling back to the YAML a copy's store kept when it was applied.

    So `patchops status` after `apply --patchsets DIR` needs no `--patchsets`: the store keeps what it applied.
    """
    stores = [ctx.store for ctx in unique_targets(copies)]
    return [named_or_recorded(name, dirs, stores) for name in names]


def named_or_recorded(name: str, dirs: Sequence[Path], stores: Sequence[Store]) -> "Patchset":
    from patchops.patchset import index as patchset_index
    from patchops.patchset.model import UnknownPatchset

    try:
        return patchset_index.get(name, dirs=tuple(dirs))
    except UnknownPatchset:
        for store in stores:
            source = store.read_state().patchsets.get(name) if store.exists() else None
            if source is not None:
                text = store.get_object(source.sha).decode("utf-8")
                return patchset_index.load_text(text, Path(source.path))
        raise
