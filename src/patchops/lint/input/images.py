"""Container image references: which name vLLM's server, and the release a tag names.

The tag is the only place a manifest, compose file or `docker run` line says which vLLM runs
(the container brings its own copy, whatever is installed where patchops runs). Official
images are tagged `vllm/vllm-openai:v0.8.5` (also `-rocm`, `-cpu`, `-xpu` repositories, and a
`-cu128`-style suffix); AMD's `rocm/vllm` tags carry the vLLM release inside
(`rocm6.3.1_vllm_0.8.5_20250521`). `latest`, `nightly` and digests name no release.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

_OFFICIAL = re.compile(r"^(?:(?:docker\.io|index\.docker\.io|registry-1\.docker\.io)/)?vllm/vllm-openai(?:-[a-z0-9]+)?$")
_OFFICIAL_TAG = re.compile(r"^v?(\d+\.\d+\.\d+(?:\.\d+)?(?:\.post\d+|rc\d+)?)(?:-[A-Za-z0-9._-]+)?$")
_EMBEDDED_TAG = re.compile(r"(?:^|[_-])vllm[_-]v?(\d+\.\d+\.\d+(?:\.\d+)?(?:\.post\d+)?)(?:$|[_-])")
_MOVING_TAGS = ("latest", "nightly", "main", "dev")


@dataclass(frozen=True)
class Image:
    """An image reference split as docker reads it: `registry/repo[:tag][@digest]`."""

    reference: str
    name: str
    tag: Optional[str]
    digest: Optional[str]

    @property
    def official(self) -> bool:
        """Return whether this is one of vLLM's own `vllm/vllm-openai*` images."""
        return bool(_OFFICIAL.match(self.name))

    @property
    def names_vllm(self) -> bool:
        """Return whether the repository's own name says vLLM (`vllm/vllm-openai`, `rocm/vllm`)."""
        return "vllm" in self.name.rsplit("/", 1)[-1].lower() or self.official


def parse_image(reference: str) -> Image:
    """Split an image reference; a `:` after the last `/` starts the tag (`host:5000/x` has none)."""
    text = reference.strip()
    name, _, digest = text.partition("@")
    tag = None
    slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > slash:
        name, tag = name[:colon], name[colon + 1:]
    return Image(reference=text, name=name, tag=tag or None, digest=digest or None)


def release_of(image: Image) -> "tuple[Optional[str], Optional[str]]":
    """Return (the vLLM release the tag names, None) or (None, why it names none)."""
    if image.tag is None:
        why = f"`{image.reference}` is pinned by digest" if image.digest else \
            f"`{image.reference}` has no tag (docker reads `latest`)"
        return None, f"{why}, which names no vLLM release"
    tag = image.tag
    if image.official:
        found = _OFFICIAL_TAG.match(tag)
        if found:
            return found.group(1), None
    else:
        found = _EMBEDDED_TAG.search(tag)
        if found:
            return found.group(1), None
    moving = tag.split("-", 1)[0].lower()
    if moving in _MOVING_TAGS:
        return None, f"the tag `{tag}` moves with each push and names no vLLM release"
    return None, f"the tag `{tag}` names no vLLM release patchops can read"
