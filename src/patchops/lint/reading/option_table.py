"""The option strings of a version's serve parser, matched as argparse matches them.

Built from the facts' flag table: every flag's `--x` (and `--no-x` for a
BooleanOptionalAction, `--disable-x` for 0.33's EnableDisableAction), in registration order,
and argparse's unique-prefix matching over them (`argparse._parse_optional`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from patchops.lint.input.serve_config import normalize_key
from patchops.lint.facts.model import Facts, Flag

# Present in every version's serve parser even if a facts table leaves them out.
_IMPLICIT_FLAGS = (
    Flag(name="model", dest="model", type="str"),
    Flag(name="config", dest="config", type="str"),
    Flag(name="help", dest="help", action="help", aliases=("-h",)),
)


@dataclass(frozen=True)
class Option:
    flag: Flag
    negated: bool = False        # the `--no-x` form of a BooleanOptionalAction


class OptionTable:
    """Option strings of a vLLM version's serve parser, as argparse matches them."""

    def __init__(self, facts: Facts):
        self.options: Dict[str, Option] = {}
        flags = dict(facts.flags)
        for extra in _IMPLICIT_FLAGS:
            if extra.dest not in flags and not any(f.name == extra.name for f in flags.values()):
                flags[extra.dest] = extra
        self.flags = flags
        # Registration order as argparse's add_argument does it (BooleanOptionalAction puts
        # `--no-x` right after `--x`): the "ambiguous option" message lists matches in it.
        for flag in flags.values():
            for option in option_strings(flag):
                negated = action_of(flag) == "boolean_optional" and option.startswith("--no-") \
                    and option not in ("--" + flag.name.lstrip("-"),) + tuple(flag.aliases)
                self.options.setdefault(option, Option(flag, negated))
            for option in inverse_options(flag, facts.option_inverses):
                self.options.setdefault(option, Option(flag, True))

    def long_names(self) -> List[str]:
        return sorted(o for o in self.options if o.startswith("--"))

    def resolve(self, token: str) -> Tuple[Optional[str], Optional[Option], Optional[str], Optional[str]]:
        """Return (option string, option, explicit value, error) as argparse._parse_optional would."""
        if token in self.options:
            return token, self.options[token], None, None
        if "=" in token:
            head, explicit = token.split("=", 1)
            if head in self.options:
                return head, self.options[head], explicit, None
        matches: List[Tuple[str, Optional[str]]] = []
        if token.startswith("--"):
            prefix, explicit = (token.split("=", 1) + [None])[:2] if "=" in token else (token, None)
            matches = [(o, explicit) for o in self.options if o.startswith(prefix)]
        elif token.startswith("-") and len(token) > 1:
            short, rest = token[:2], token[2:]
            for option in self.options:
                if option == short:
                    matches.append((option, rest))
                elif option.startswith(token):
                    matches.append((option, None))
        if len(matches) > 1:
            names = ", ".join(m[0] for m in matches)
            return None, None, None, f"ambiguous option: {token.split('=', 1)[0]} could match {names}"
        if len(matches) == 1:
            option, explicit = matches[0]
            return option, self.options[option], explicit, None
        return None, None, None, None

    def dest_for(self, key: str) -> str:
        """Return the dest a written key (`max_num_seqs`, `max-num`) reaches, else the key normalised."""
        _, found, _, _ = self.resolve("--" + key.replace("_", "-"))
        return found.flag.dest if found is not None else normalize_key(key)


def option_table(facts: Facts) -> OptionTable:
    """Return the OptionTable of `facts`, built once per Facts (reading and rules share it)."""
    table = facts.__dict__.get("_option_table")
    if table is None:
        table = OptionTable(facts)
        object.__setattr__(facts, "_option_table", table)  # a cache on a frozen dataclass, as Facts._by_option
    return table


def action_of(flag: Flag) -> str:
    """Return a flag's argparse action in one spelling: `store`, `boolean_optional`, ..."""
    action = (flag.action or "store").lower()
    if "booleanoptional" in action.replace("_", ""):
        return "boolean_optional"
    if "storeboolean" in action.replace("_", ""):
        return "store_boolean"
    return action


def option_strings(flag: Flag) -> List[str]:
    """Return a flag's option strings in argparse's order (BooleanOptionalAction.__init__)."""
    strings: List[str] = []
    for option in ["--" + flag.name.lstrip("-")] + list(flag.aliases):
        strings.append(option)
        if action_of(flag) == "boolean_optional" and option.startswith("--"):
            strings.append("--no-" + option[2:])
    return strings


def inverse_options(flag: Flag, inverses: Dict[str, str]) -> List[str]:
    """Return the `--disable-x` spellings 0.33's EnableDisableAction adds to `--enable-x`."""
    if action_of(flag) != "boolean_optional":
        return []
    return [inverse + option[len(prefix):] for option in ["--" + flag.name] + list(flag.aliases)
            for prefix, inverse in inverses.items() if option.startswith(prefix)]


def display_name(flag: Flag) -> str:
    """Return the option as argparse names it in errors: every option string, joined by `/`."""
    return "/".join(option_strings(flag))
