"""Read a vLLM copy's facts from its source with stdlib `ast`, never importing it.

The linter runs on boxes where importing vLLM needs the accelerator (and takes seconds), so
everything here is static: parse the few files that define the command line, follow imports
inside the `vllm` package only, and resolve what resolves to a literal. Anything that does
not resolve is left out rather than guessed.

This module names the files every reader shares and holds `extract`, which reads every group of
readers.py; it imports no reader, so facts vouched for by a release (facts/vouch.py) load none.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List, Sequence, Tuple

if TYPE_CHECKING:
    from patchops.lint.facts.model import Facts

# Files whose add_argument calls make up `vllm serve`'s options (paths relative to the site
# directory). cli_args.py moved to entrypoints/common/ by 0.33.0; the serve subparser's own
# options (model_tag, --config, --headless) lived in scripts.py (0.6.3) and
# entrypoints/cli/serve.py (0.7.3-0.9.2) before moving into make_arg_parser (0.10.0).
ARG_UTILS = "vllm/engine/arg_utils.py"
CLI_ARGS_FILES = ("vllm/entrypoints/openai/cli_args.py", "vllm/entrypoints/common/cli_args.py")
SERVE_PARSER_FILES = ("vllm/scripts.py", "vllm/entrypoints/cli/serve.py")
# The flash-attn extension whose absence makes V0 fall back to XFORMERS (vllm/attention/selector.py):
# 0.6.3 ships vllm_flash_attn_c.abi3.so, 0.7.3+ _vllm_fa2_C.abi3.so and _vllm_fa3_C.abi3.so.
FLASH_ATTN_SO = (
    "vllm/vllm_flash_attn/vllm_flash_attn_c.abi3.so",
    "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so",
    "vllm/vllm_flash_attn/_vllm_fa3_C.abi3.so",
)


def library_present(site: Path, name: str, extra_paths: Sequence[Path]) -> bool:
    """Whether package `name` sits in the site dir or an extra path (folder or dist-info).

    The distribution is `flashinfer-python` (dist-info `flashinfer_python-*`); the separate
    `flashinfer-cubin` / `flashinfer-jit-cache` wheels alone do not make it importable.
    """
    for root in [site, *extra_paths]:
        root = Path(root)
        if (root / name / "__init__.py").is_file():
            return True
        try:
            if any(root.glob(f"{name}-*.dist-info")) or any(root.glob(f"{name}_python-*.dist-info")):
                return True
        except OSError:
            continue
    return False


def extract(site_dir: Path, extra_paths: Sequence[Path] = ()) -> Tuple[Facts, List[str]]:
    """Extract Facts from a vLLM copy; also return the files it consulted (the cache hashes them)."""
    from patchops.lint.extract.readers import GROUPS, Reading  # it imports this module

    reading = Reading(Path(site_dir), extra_paths)
    facts = reading.facts([group.name for group in GROUPS])
    return facts, sorted(reading.src.consulted)
