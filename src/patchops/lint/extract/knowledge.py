"""The config-time knowledge of a copy beyond its flag table, gathered for `Facts`.

Each reader lives in its own module (registries, config fields, parser spellings, the
max-length derivation); this one calls them for `facts_extract.extract`, each guarded so a
fork's odd file costs that fact only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Dict

from patchops.lint.facts.model import Flag

from patchops.lint.extract import model_registry as architectures
from patchops.lint.extract import bool_spellings
from patchops.lint.extract import config_fields
from patchops.lint.extract import guard_programs
from patchops.lint.extract import guards
from patchops.lint.extract import max_len
from patchops.lint.extract import oracle
from patchops.lint.extract import parallel
from patchops.lint.extract import registries
from patchops.lint.extract import requirements
from patchops.lint.extract.source_tree import Source
from patchops.lint.extract.static_eval import Classes


def read_knowledge(src: Source, classes: Classes, has_ray: bool,
                   guarded: Callable[[str, Callable[[], Any], Any], Any]) -> Dict[str, Any]:
    """Return the Facts fields read here, by name (`has_ray`: ray beside the copy)."""
    ranges = guarded("value ranges", lambda: {
        **guards.front_end_bounds(src), **config_fields.value_range_facts(src, classes)}, {})
    return {
        "registries": guarded("parser registries", lambda: registries.registry_facts(src), {}),
        "quantization_needs": guarded("quantization checkpoint needs",
                                      lambda: registries.quantization_checkpoint_needs(src), {}),
        "quantization_limits": guarded("quantization GPU and dtype limits",
                                       lambda: registries.quantization_limits(src), {}),
        "nested_configs": guarded("nested config fields",
                                  lambda: config_fields.nested_config_facts(src, classes), {}),
        "value_ranges": ranges,
        "option_inverses": guarded("boolean flag spellings", lambda: bool_spellings.option_inverses(src), {}),
        "max_len": guarded("max length derivation", lambda: max_len.max_len_facts(src), {}),
        "parallel": guarded("executor choice", lambda: parallel.parallel_facts(src), {}),
        "guards": guarded("config guards", lambda: guards.guard_facts(src), {}),
        "companions": guarded("companion flags", lambda: guards.companion_flags(src), {}),
        "swap_space": guarded("swap space limits", lambda: guards.swap_space_limits(src), {}),
        "async_speculative": guarded("async scheduling's speculative methods",
                                     lambda: guards.async_speculative_methods(src, classes), {}),
        "config_checks": guarded("config class checks",
                                 lambda: guard_programs.checked_classes(src, classes, ranges), {}),
        "required_dists": guarded("required distributions", lambda: requirements.required_dists(src), ()),
        "has_ray": has_ray,
        "v1_oracle": guarded("V1 oracle", lambda: _pairs(oracle.oracle_facts(src)), None),
        "custom_allreduce": guarded("custom all-reduce", lambda: oracle.custom_allreduce_facts(src), {}),
        "v1_platforms": guarded("platforms' V1 support", lambda: oracle.platform_v1_facts(src), {}),
        "architectures": guarded("model architectures", lambda: architectures.architecture_facts(src), {}),
    }


def _pairs(found):
    return tuple(tuple(t) for t in found) if found is not None else None


def with_registry_choices(src: Source, flags: Dict[str, Flag], knowledge: Dict[str, Any]) -> Dict[str, Flag]:
    """Give flags whose argparse `choices=` come from a parser registry those names (0.8.x)."""
    from patchops.lint.extract import ARG_UTILS, CLI_ARGS_FILES

    options = registries.registry_choice_flags(src, (ARG_UTILS,) + CLI_ARGS_FILES)
    out = dict(flags)
    for dest, flag in flags.items():
        registry = options.get("--" + flag.name)
        names = knowledge["registries"].get(registry) if registry else None
        if names and flag.choices is None:
            out[dest] = replace(flag, choices=tuple(names))
    return out
