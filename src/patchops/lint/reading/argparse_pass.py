"""One argparse pass over a version's rewritten argv tokens: what each dest ends up as.

Replays `argparse.ArgumentParser.parse_args` over the option table: nargs, store_true and
BooleanOptionalAction, 0.6.3's StoreBoolean, append, `--lora-modules`' own action, conversion
and choices, with argparse's messages for what it refuses (`unrecognized arguments`,
`expected one argument`, `invalid choice`) and the key (YAML or command line) each value came from.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Optional, Set, Tuple

from patchops.lint.input.serve_config import ServeConfig, Setting, normalize_key
from patchops.lint.facts.model import Flag
from patchops.lint.input.launch_command import is_option
from patchops.lint.reading.command_line import Token
from patchops.lint.reading.option_table import Option, OptionTable, action_of, display_name
from patchops.lint.reading.read_config import Fate, Outcome
from patchops.lint.reading.value_types import (BadValue, ChanceValue, check_choice, convert,
                                               lora_module_problem)
from patchops.lint.vllm.releases import Version

NARGS0_ACTIONS = ("store_true", "store_false", "store_const", "count", "boolean_optional",
                  "help", "version", "append_const")


def _nargs(flag: Flag) -> Optional[str]:
    return flag.nargs if flag.nargs is None else str(flag.nargs)


class ArgparsePass:
    """One argparse pass over the processed tokens, recording what each dest ends up as."""

    def __init__(self, cfg: ServeConfig, table: OptionTable, version: Version):
        self.cfg = cfg
        self.table = table
        self.version = version
        self.values: Dict[str, Tuple[Setting, Any, str]] = {}   # dest -> (origin, value, option)
        self.unknown: List[Outcome] = []
        self.rejected: Dict[str, Outcome] = {}       # by dest: the first refusal
        self.by_chance: Set[str] = set()     # rejected in some launches only: also read as given
        self.duplicates: List[Tuple[Setting, Setting]] = []
        self.model_tag: Optional[Setting] = None
        self._last: Dict[Tuple[str, str], Setting] = {}

    def reject(self, name: str, origin: Setting, message: str) -> None:
        self.rejected.setdefault(name, Outcome(Fate.REJECTED, dataclasses.replace(origin, name=name),
                                               name, message))

    def run(self, tokens: List[Token]) -> None:
        index = 0
        while index < len(tokens):
            tok = tokens[index]
            index += 1
            if tok.crash is not None:
                self.reject(normalize_key(tok.origin.key), tok.origin, tok.crash)
                continue
            if tok.is_value or not is_option(tok.text):
                self.positional(tok)
                continue
            option, found, explicit, error = self.table.resolve(tok.text)
            if found is not None:
                index = self.optional(tok, option, found, explicit, tokens, index)
                continue
            # Not a flag: take the values that came with it (its YAML value, or the CLI words
            # up to the next option) so they are reported with it, not as stray positionals.
            swallowed: List[str] = []
            while index < len(tokens) and tokens[index].layer == tok.layer and (
                    (tok.layer == "yaml" and tokens[index].origin is tok.origin)
                    or (tok.layer == "cli" and "=" not in tok.text
                        and not is_option(tokens[index].text))):
                swallowed.append(tokens[index].text)
                index += 1
            key = tok.text.split("=", 1)[0]
            origin = tok.origin
            if tok.layer == "cli":
                key = str(origin.value).split("=", 1)[0] if is_option(str(origin.value)) else key
                value: Any = tok.text.split("=", 1)[1] if "=" in tok.text else \
                    swallowed[0] if len(swallowed) == 1 else swallowed or True
                origin = dataclasses.replace(origin, key=key, name=normalize_key(key), value=value)
            if error is not None:
                self.reject(normalize_key(key), origin, error)
            else:
                self.unknown.append(Outcome(Fate.UNKNOWN, origin))

    def positional(self, tok: Token) -> None:
        if tok.layer == "cli" and self.cfg.entrypoint == "serve" and self.model_tag is None:
            self.model_tag = tok.origin
            return
        if tok.origin.unknown:
            return                  # `$EXTRA_ARGS`: what the shell puts there is not known
        # argparse: `unrecognized arguments: True` (e.g. 0.6.3's `--enforce-eager True`).
        name = self.table.dest_for(tok.origin.key) if tok.layer == "yaml" else normalize_key(tok.text)
        self.reject(name, tok.origin, f"unrecognized arguments: {tok.text}")

    def optional(self, tok: Token, option: str, found: Option, explicit: Optional[str],
                 tokens: List[Token], index: int) -> int:
        flag = found.flag
        action = action_of(flag)
        dest = flag.dest
        origin = tok.origin
        option = display_name(flag)
        if tok.layer == "cli":
            written = str(origin.value) if is_option(str(origin.value)) else tok.text
            origin = dataclasses.replace(origin, key=written.split("=", 1)[0], name=dest)
        nargs = _nargs(flag)
        strings: List[str] = []
        if action in NARGS0_ACTIONS or nargs == "0":
            if explicit is not None:
                self.reject(dest, origin, f"argument {option}: ignored explicit argument {explicit!r}")
                return index
            if action == "help":
                return index
            value: Any = {"store_false": False}.get(action, True)
            if action == "boolean_optional":
                value = not found.negated
            self.store(dest, origin, value, option, tok.layer)
            return index
        # value-taking actions
        unknown = tok.origin.unknown
        if explicit is not None:
            strings = [explicit]
        else:
            want_many = nargs in ("+", "*") or (nargs or "").isdigit()
            first = index
            while index < len(tokens) and tokens[index].crash is None and \
                    (tokens[index].is_value or not is_option(tokens[index].text)):
                strings.append(tokens[index].text)
                unknown = unknown or tokens[index].origin.unknown
                index += 1
                if not want_many and len(strings) == 1:
                    break
                if (nargs or "").isdigit() and len(strings) == int(nargs):
                    break
            if tok.layer == "cli":
                origin = _with_value_span(origin, tok.origin, tokens[first:index])
        if unknown:
            # `--max-model-len $LEN`: the value, or whether there is one, is the shell's to give.
            self.store(dest, dataclasses.replace(origin, unknown=True), strings[0] if len(strings) == 1
                       else strings, option, tok.layer)
            return index
        if action == "store_boolean":                    # StoreBoolean, 0.6.3-0.7.3
            text = strings[0] if strings else "True"
            if text.lower() not in ("true", "false"):
                self.reject(dest, origin, f"Invalid boolean value: {text}. Expected 'true' or 'false'.")
                return index
            self.store(dest, origin, text.lower() == "true", option, tok.layer)
            return index
        if not strings:
            if nargs == "?":
                self.store(dest, origin, None, option, tok.layer)
                return index
            if nargs == "*":
                self.store(dest, origin, [], option, tok.layer)
                return index
            need = "at least one argument" if nargs == "+" else "one argument"
            self.reject(dest, origin, f"argument {option}: expected {need}")
            return index
        try:
            converted = [convert(flag, s, self.version) for s in strings]
            for item in converted:
                check_choice(flag, item)
        except ChanceValue as exc:
            self.reject(dest, origin, f"argument {option}: {exc}")
            self.by_chance.add(dest)
        except BadValue as exc:
            self.reject(dest, origin, f"argument {option}: {exc}")
            return index
        refused = lora_module_problem(converted) if action == "loraparseraction" else ""
        if refused:
            self.reject(dest, origin, refused)   # the action's parser.error
            return index
        if nargs in ("+", "*") or (nargs or "").isdigit():
            value = converted
        else:
            value = converted[0]
        if action == "append":
            previous = self.values.get(dest)
            value = (list(previous[1]) if previous else []) + [value]
        self.store(dest, origin, value, option, tok.layer)
        return index

    def store(self, dest: str, origin: Setting, value: Any, option: str, layer: str) -> None:
        previous = self._last.get((layer, dest))
        if previous is not None and previous is not origin and \
                normalize_key(previous.key) != normalize_key(origin.key):
            self.duplicates.append((previous, origin))
        self._last[(layer, dest)] = origin
        self.values[dest] = (origin, value, option)


def _with_value_span(origin: Setting, token: Setting, values: List[Token]) -> Setting:
    """Return `origin` with value_span over the command-line tokens its option `token` took."""
    spans = [t.origin.key_span for t in values if t.origin is not token]
    if not values or len(spans) != len(values) or None in spans:
        return origin
    return dataclasses.replace(origin, value_span=(spans[0][0], spans[-1][1]))
