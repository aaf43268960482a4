"""Name rules the way users do: a code (`PO201`), a code prefix (`PO2`, `ALL`) or a rule name.

One home for the matching that `--select`, `--ignore`, `# patchops: ignore[...]`,
`patchops rules` and the config file's `select`/`ignore`/`per-file-ignores` share, so a name
that works in one place works in all of them (as in ruff). An old code (lint/codes.py's
REDIRECTS) names the rule that has its new code.
"""

from __future__ import annotations

from typing import Iterable, List, Sequence

from patchops.core.errors import UsageError
from patchops.lint.codes import redirected

ALL = "ALL"


def split(values: Iterable[str]) -> List[str]:
    """Return the selectors in `values`, each of which may be a comma list (`PO2,PO3`)."""
    return [part.strip() for value in values for part in str(value).split(",") if part.strip()]


def matches(selector: str, code: str, name: str) -> bool:
    """Return whether `selector` names the rule with `code` and `name`."""
    wanted = redirected(selector).strip()
    if wanted.upper() == ALL:
        return True
    if wanted[:2].upper() == "PO":
        return code.startswith(wanted.upper())
    return wanted.lower() == name


def is_selected(code: str, name: str, select: Sequence[str] = (), ignore: Sequence[str] = ()) -> bool:
    """Return whether a rule passes `select` (empty: every rule) and is not in `ignore`."""
    if select and not any(matches(s, code, name) for s in select):
        return False
    return not any(matches(s, code, name) for s in ignore)


def check(option: str, selectors: Sequence[str], rules) -> None:
    """Refuse a selector that names no rule: a typo would silently lint nothing (or everything)."""
    for selector in selectors:
        if not any(matches(selector, rule.code, rule.name) for rule in rules):
            raise UsageError(f"{option} {selector} matches no rule code or name{did_you_mean(selector, rules)}; "
                             "`patchops rules` lists them")


def did_you_mean(selector: str, rules) -> str:
    """Return ` (did you mean multistep-removed?)` for the closest rule name or code, or ""."""
    import difflib

    wanted = selector.strip()
    names = [rule.name for rule in rules] + [rule.code for rule in rules]
    close = difflib.get_close_matches(wanted, names, n=3, cutoff=0.6)
    # Of equally close names, the one with more letters in place: PO2O1 is PO201, not PO621.
    best = max(close, key=lambda name: (difflib.SequenceMatcher(None, wanted, name).ratio(),
                                        sum(a == b for a, b in zip(wanted, name))), default=None)
    return f" (did you mean {best}?)" if best else ""
