"""How a release's argument parser resolves an option string, across the shipped releases.

argparse accepts any unique prefix of a long option, and the set of options changes in every
release (0.33 adds a `--disable-x` for every `--enable-x`): a prefix that picks one flag in one
release is ambiguous or unknown in another. `reading.option_table.OptionTable` replays the matching.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from patchops.lint.facts.model import Facts, shipped_option_facts
from patchops.lint.reading.option_table import option_table




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
