"""The copies a patching command works on, each with its store; what a crash left is repaired first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Tuple

from patchops.core.digest_cache import DigestCache
from patchops.host.locate import distinct_copies
from patchops.core.records import field, record
from patchops.store.recovery import pending, recover
from patchops.store.site_store import Store
from patchops.store.writability import first_unwritable

if TYPE_CHECKING:
    from patchops.host.locate import VllmCopy
    from patchops.patchset.model import Patchset


@record
class Target:
    """One vLLM copy, the store beside it, and the digests of its files earlier runs hashed."""

    copy: "VllmCopy"
    store: Store
    digests: Optional[DigestCache] = field(default=None, repr=False, compare=False)

    @property
    def site_dir(self) -> Path:
        return self.copy.site_dir

    def path(self, rel: str) -> Path:
        return self.copy.package_dir / rel

    def display(self, rel: str) -> str:
        return f"{self.copy.package_dir.name}/{rel}"

    def read_hashed(self, rel: str) -> Tuple[Optional[bytes], Optional[str]]:
        """Return file `rel`'s bytes and sha256, (None, None) if it does not exist.

        The sha comes from the digest cache while the file's stamp is the one it had when
        hashed (call save_digests() when done); else it is computed.
        """
        data, info = self.store.read_file_stat(rel)
        if data is None or info is None:
            return None, None
        if self.digests is None:
            self.digests = DigestCache(str(self.store.site_dir), "targets")
        return data, self.digests.sha256(str(self.path(rel)), data, info)

    def save_digests(self) -> None:
        """Keep the digests read_hashed() computed, for the next run."""
        if self.digests is not None:
            self.digests.save()


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
    """Repair what a crashed patchops left, in every store that has something to repair.

    A clean store is not locked: planning only reads, and the commit checks under the lock
    that nothing changed since. So the nodes of a fleet that share a copy plan it at once
    without refusing each other, as status reads beside a running apply.
    """
    notes = []
    for store in sorted(stores):
        if store.exists() and pending(store):
            with store.lock(create=False):
                notes += recover(store)
    return notes



def unwritable(target: Target, patchsets: Sequence["Patchset"], copies: Sequence["VllmCopy"]) -> Optional[str]:
    """Return why patchops cannot write this copy's store or the files `patchsets` change
    there, with the fix; None when it can. Names the copy `import vllm` loads if another."""
    store, version = target.store, target.copy.version
    rels = dict.fromkeys(rel for patchset in patchsets if patchset.applies_to(version)
                         for rel in patchset.files_for(version))
    files = [Path(os.path.realpath(store.path(rel))) for rel in rels]
    caches = [path.parent / "__pycache__" for path in files]
    folders = [store.root if store.root.is_dir() else store.site_dir,
               *dict.fromkeys(path.parent for path in files), *(c for c in caches if c.is_dir())]
    found = first_unwritable(folders, files)
    if found is None:
        return None
    text = f"cannot write the vLLM copy in {target.site_dir}: {found.message()}"
    winner = next((copy for copy in copies if copy.wins), None)
    if winner is not None and os.path.realpath(winner.site_dir) != str(store.site_dir):
        text += f"; or pass --site {winner.site_dir} to patch only the copy `import vllm` loads"
    return text
