"""The config-time knowledge of a copy beyond its flag table, gathered for `Facts`.

Each reader lives in its own module (registries, config fields, parser spellings, the
max-length derivation); this one calls them for `facts_extract.extract`, each guarded so a
fork's odd file costs that fact only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, Sequence

from patchops.lint import facts_fields, facts_model, facts_parallel, facts_parser, facts_registries
from patchops.lint.facts_extract import Classes, Source, library_present


def read_knowledge(src: Source, classes: Classes, site: Path, extra_paths: Sequence[Path],
                   guarded: Callable[[str, Callable[[], Any], Any], Any]) -> Dict[str, Any]:
    """Return the Facts fields read here, by name."""
    return {
        "registries": guarded("parser registries", lambda: facts_registries.registry_facts(src), {}),
        "nested_configs": guarded("nested config fields",
                                  lambda: facts_fields.nested_config_facts(src, classes), {}),
        "value_ranges": guarded("value ranges", lambda: facts_fields.value_range_facts(src, classes), {}),
        "option_inverses": guarded("boolean flag spellings", lambda: facts_parser.option_inverses(src), {}),
        "max_len": guarded("max length derivation", lambda: facts_model.max_len_facts(src), {}),
        "parallel": guarded("executor choice", lambda: facts_parallel.parallel_facts(src), {}),
        "has_ray": library_present(site, "ray", extra_paths),
    }
