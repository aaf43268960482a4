"""How a release's argument parser resolves an option string, across the shipped releases.

argparse accepts any unique prefix of a long option, and the set of options changes in every
release (0.33 adds a `--disable-x` for every `--enable-x`): a prefix that picks one flag in one
release is ambiguous or unknown in another. `reading.option_table.OptionTable` replays the matching.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts, Flag, shipped_option_facts
from patchops.lint.reading.option_table import option_table
from patchops.lint.vllm import releases


def expansion(facts: Facts, option: str) -> Optional[Tuple[str, str]]:
    """Return (full option, dest) when `option` is an abbreviation `facts`' parser expands."""
    table = option_table(facts)
    if option in table.options:
        return None
    resolved, match, _, error = table.resolve(option)
    if match is None or error is not None:
        return None
    return resolved, match.flag.dest


def meaning_elsewhere(option: str, dest: str) -> List[str]:
    """Describe, grouped, the shipped releases where `option` does not mean `dest`."""
    groups: List[Tuple[str, List[str]]] = []
    for facts in shipped_option_facts():
        version = facts.version
        _, match, _, error = option_table(facts).resolve(option)
        if error is not None:
            label = "ambiguous"
        elif match is None:
            label = "unknown"
        elif match.flag.dest != dest:
            label = f"means --{match.flag.name}"
        else:
            continue
        if groups and groups[-1][0] == label:
            groups[-1][1].append(version)
        else:
            groups.append((label, [version]))
    return [f"{label} in vLLM {versions[0]} to {versions[-1]}" if len(versions) > 2   # a run of releases
            else f"{label} in vLLM {', '.join(versions)}" for label, versions in groups]


# Removed options and what took their place (vLLM's own deprecation messages: the speculative
# options folded into --speculative-config in 0.8, cuda_graph_sizes into cudagraph_capture_sizes
# in 0.12).
SUCCESSORS = {
    "speculative_model": "--speculative-config '{\"model\": ...}'",
    "num_speculative_tokens": "--speculative-config '{\"num_speculative_tokens\": ...}'",
    "speculative_draft_tensor_parallel_size": "--speculative-config '{\"draft_tensor_parallel_size\": ...}'",
    "speculative_max_model_len": "--speculative-config '{\"max_model_len\": ...}'",
    "ngram_prompt_lookup_max": "--speculative-config '{\"prompt_lookup_max\": ...}'",
    "ngram_prompt_lookup_min": "--speculative-config '{\"prompt_lookup_min\": ...}'",
    "cuda_graph_sizes": "--cudagraph-capture-sizes",
}


def known_names(facts: Facts) -> Dict[str, Flag]:
    """Return every long option name `facts` accepts, normalised like Setting.name, to its flag."""
    found: Dict[str, Flag] = {}
    for flag in facts.flags.values():
        for name in flag.option_names():
            found.setdefault(name.replace("-", "_"), flag)
    return found


def short_aliases(flag: Flag) -> List[str]:
    """Return the one-dash aliases of `flag` without the dash (`tp` for `-tp`)."""
    return [a[1:] for a in flag.aliases if a.startswith("-") and not a.startswith("--")]


def alias_target(name: str, facts: Facts) -> Optional[Flag]:
    """Return the flag whose short alias (`-tp`) is `name` written as a long key (`tp`)."""
    for flag in facts.flags.values():
        if any(alias.replace("-", "_") == name for alias in short_aliases(flag)):
            return flag
    return None


@lru_cache(maxsize=None)
def _shipped() -> Tuple[Tuple[str, frozenset], ...]:
    """Return (version, accepted option names) for every version patchops ships facts for."""
    return tuple((facts.version, frozenset(known_names(facts)))
                 for facts in shipped_option_facts())  # oldest first


def flag_history(name: str, version: str) -> Tuple[Optional[str], Optional[str]]:
    """Return (last shipped version before `version` with `name`, first one after it)."""
    current = releases.release(version)
    before = [v for v, names in _shipped() if releases.parse_version(v) < current and name in names]
    after = [v for v, names in _shipped() if releases.parse_version(v) > current and name in names]
    return (before[-1] if before else None, after[0] if after else None)


def argv_of(setting: Setting, version: str) -> str:
    """Return the argv tokens vLLM ends up rejecting for `setting`, as argparse prints them.

    FlexibleArgumentParser.parse_args rewrites `_` to `-` in `--options`; a config file's
    value becomes `str(value)`, a list only from 0.10.2 separate tokens, `true` a bare option.
    """
    if setting.source == "cli":
        option = setting.key if setting.key.startswith("-") else "--" + setting.key
    else:
        option = "--" + setting.key.lstrip("-")
    if option.startswith("--"):
        option = "--" + option[2:].replace("_", "-")
    value = setting.value
    if value is True or value is None:
        return option
    if isinstance(value, list):
        if setting.source == "cli" or releases.release(version) >= releases.UNKNOWN_LIST_SPLIT:
            return " ".join([option] + [str(v) for v in value])
    return f"{option} {value}"


def alias_short(flag: Flag, name: str) -> str:
    """Return the short alias of `flag` that `name` spells, without its dash (`tp`)."""
    for alias in short_aliases(flag):
        if alias.replace("-", "_") == name:
            return alias
    return name


def close_names(name: str, known: Dict[str, Flag]) -> List[str]:
    """Return up to two accepted option names close to `name`, the closest first."""
    return difflib.get_close_matches(name, list(known), n=2, cutoff=0.75)
