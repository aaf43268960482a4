"""The vLLM version parser, for the patching side: it lives in `lint/vllm/releases.py`.

Kept so `ops/base.py` needs no edit while it is being split; import from releases instead.
"""

from patchops.lint.vllm.releases import in_range, parse_release, parse_version, release

__all__ = ["in_range", "parse_release", "parse_version", "release"]
