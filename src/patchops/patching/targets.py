"""The copies a patching command works on, each with its store; what a crash left is repaired first."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence

from patchops.locate import distinct_copies
from patchops.records import record
from patchops.recovery import recover
from patchops.store import Store

if TYPE_CHECKING:
    from patchops.locate import VllmCopy


@record
class Target:
    """One vLLM copy and the store beside it."""

    copy: "VllmCopy"
    store: Store

    @property
    def site_dir(self) -> Path:
        return self.copy.site_dir

    def path(self, rel: str) -> Path:
        return self.copy.package_dir / rel

    def display(self, rel: str) -> str:
        return f"{self.copy.package_dir.name}/{rel}"


def unique_targets(copies: Sequence["VllmCopy"], stores: Optional[Dict[Path, Store]] = None) -> List[Target]:
    """Return a Target per copy, dropping copies that reach the same files (lib64 -> lib
    symlinks): each is patched once. `stores` collects the stores by resolved site dir."""
    result = []
    for copy in distinct_copies(copies):
        store = Store(copy.site_dir, copy.package_dir.name)
        if stores is not None:
            store = stores.setdefault(store.site_dir, store)
        result.append(Target(copy, store))
    return result


def recover_stores(stores: Sequence[Store]) -> List[str]:
    """Repair what a crashed patchops left, in every store that exists."""
    notes = []
    for store in sorted(stores):
        if store.exists():
            with store.lock(create=False):
                notes += recover(store)
    return notes

