"""What a given vLLM version will see from a ServeConfig: `read_as_vllm(cfg, facts)`.

vLLM turns a `--config` YAML back into argv tokens (`FlexibleArgumentParser._load_config_file`,
`load_config_file` from 0.10.2), inserts them after the subcommand, rewrites option names
(`_` -> `-`, `-O3`, dotted `--x.y` keys) and hands everything to argparse, which also accepts
unique prefixes. This module replays those steps over the YAML layer and the command-line layer
with the version's flag table (`facts.flags`) and returns a new ServeConfig keyed by argparse
dest (== EngineArgs field), with typed values, and:

* `unknown`  - keys no flag matches (argparse: `unrecognized arguments`);
* `rejected` - known keys whose value argparse refuses (bad type, bad choice, a stray `True`
  after a store_true flag in 0.6.3, ambiguous abbreviations): vLLM exits at launch;
* `ignored`  - values vLLM drops or mangles without a word (`false` from YAML, lists before
  0.10.2, `--config=FILE`).

The behaviour table is §7 of the vLLM launch-checks reference; each branch names its source.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from patchops.lint.config import ServeConfig, Setting, human_readable_int, normalize_key
from patchops.lint.facts import Facts, Flag
from patchops.lint.launch_command import is_option
from patchops.lint.vllm.releases import (BOOL_AS_FLAG, COMPILATION_JSON, COMPILATION_LITERAL_EVAL,
                                         CONFIG_FIRST_OK, DICTS_AS_JSON, DOTTED_KEYS, LISTS_EXPANDED,
                                         MODEL_IN_CONFIG, NO_FORM_FROM_YAML, O_IS_OPT_LEVEL, Version, release)

# The boundaries of vLLM's FlexibleArgumentParser (utils.py / utils/__init__.py /
# utils/argparse_utils.py) are in releases.py; see section 7 of the reference.

NARGS0_ACTIONS = ("store_true", "store_false", "store_const", "count", "boolean_optional",
                  "help", "version", "append_const")

# Present in every version's serve parser even if a facts table leaves them out.
_IMPLICIT_FLAGS = (
    Flag(name="model", dest="model", type="str"),
    Flag(name="config", dest="config", type="str"),
    Flag(name="help", dest="help", action="help", aliases=("-h",)),
)


# --- the flag table -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Option:
    flag: Flag
    negated: bool = False        # the `--no-x` form of a BooleanOptionalAction


class OptionTable:
    """Option strings of a vLLM version's serve parser, as argparse matches them."""

    def __init__(self, facts: Facts):
        self.options: Dict[str, _Option] = {}
        flags = dict(facts.flags)
        for extra in _IMPLICIT_FLAGS:
            if extra.dest not in flags and not any(f.name == extra.name for f in flags.values()):
                flags[extra.dest] = extra
        self.flags = flags
        # Registration order as argparse's add_argument does it (BooleanOptionalAction puts
        # `--no-x` right after `--x`): the "ambiguous option" message lists matches in it.
        for flag in flags.values():
            for option in _option_strings(flag):
                negated = _action(flag) == "boolean_optional" and option.startswith("--no-") \
                    and option not in ("--" + flag.name.lstrip("-"),) + tuple(flag.aliases)
                self.options.setdefault(option, _Option(flag, negated))
            for option in inverse_options(flag, facts.option_inverses):
                self.options.setdefault(option, _Option(flag, True))

    def long_names(self) -> List[str]:
        return sorted(o for o in self.options if o.startswith("--"))

    def resolve(self, token: str) -> Tuple[Optional[str], Optional[_Option], Optional[str], Optional[str]]:
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


def _action(flag: Flag) -> str:
    action = (flag.action or "store").lower()
    if "booleanoptional" in action.replace("_", ""):
        return "boolean_optional"
    if "storeboolean" in action.replace("_", ""):
        return "store_boolean"
    return action


def _type_kind(flag: Flag, version: Version) -> Tuple[str, bool]:
    """Return (kind, accepts "None") for a flag's argparse type from the facts.

    Understands the facts' names ("int", "float", "str", "bool", "json", "json_or_str",
    "human_int", "human_int_or_auto", "kvs") and raw callable spellings ("optional_type(int)",
    "nullable_str", "json.loads", "human_readable_int", "CompilationConfig.from_cli"). Other
    names read as str.
    """
    low = (flag.type or "str").strip().lower()
    words = re.findall(r"[a-z]+", low)
    optional = bool(getattr(flag, "optional", False)) or low.startswith(("optional", "nullable"))
    if flag.dest == "compilation_config" and COMPILATION_LITERAL_EVAL <= version < COMPILATION_JSON and \
            ("json" in low or "from_cli" in low or "literal" in low):
        # CompilationConfig.from_cli reads "0".."3" or ast.literal_eval's dict in 0.7.x-0.8.x
        # (config.py); JSON from 0.9.
        return "compilation_literal", optional
    if "human" in low:
        return ("human_int_auto" if "auto" in low else "human_int"), optional
    if "json_or_str" in low or "union_dict_and_str" in low:
        return "json_or_str", optional
    if "kvs" in words or "nullable_kvs" in low:
        return "kvs", True
    if "from_cli" in low or "json" in words or "loads" in words or "dict" in words:
        return "json", optional
    for base in ("int", "float", "bool", "str"):
        if base in words:
            return base, optional
    return "str", optional


class _BadValue(Exception):
    pass


def convert(flag: Flag, text: str, version: Version) -> Any:
    """Convert one argv string the way the flag's argparse `type` would; raise _BadValue."""
    kind, optional = _type_kind(flag, version)
    if optional and text in ("", "None"):
        return None
    try:
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
        if kind == "bool":
            return bool(text)
        if kind == "human_int":
            return human_readable_int(text)
        if kind == "human_int_auto":
            if text.strip() == "-1" or text.strip().lower() == "auto":
                return -1
            return human_readable_int(text)
        if kind == "json":
            return json.loads(text)
        if kind == "compilation_literal":
            if text in ("0", "1", "2", "3"):
                return {"level": int(text)}
            value = ast.literal_eval(text)
            if not isinstance(value, dict):
                raise ValueError("not a mapping")
            return value
        if kind == "json_or_str":             # union_dict_and_str: JSON only when it looks like {...}
            return json.loads(text) if re.match(r"^{.*}$", text) else text
        if kind == "kvs":                     # nullable_kvs (0.6.3-0.7.3): "image=2,video=1"
            if not text:
                return None
            out = {}
            for item in text.split(","):
                parts = [p.lower().strip() for p in item.split("=")]
                if len(parts) != 2:
                    raise ValueError("Each item should be in the form KEY=VALUE")
                out[parts[0]] = int(parts[1])
            return out
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        label = {"human_int": "human_readable_int", "human_int_auto": "human_readable_int_or_auto",
                 "json": "loads", "json_or_str": "union_dict_and_str",
                 "compilation_literal": "from_cli", "kvs": "nullable_kvs"}.get(kind, kind)
        detail = f" ({exc})" if kind in ("human_int", "human_int_auto") and "Decimals" in str(exc) else ""
        raise _BadValue(f"invalid {label} value: {text!r}{detail}") from None
    return text


# --- tokens ---------------------------------------------------------------------------------


@dataclass
class _Tok:
    text: str
    origin: Setting           # the YAML key or the command-line token it came from
    layer: str                # "yaml" | "cli"
    is_value: bool = False    # a YAML value token (never an option, never the model)
    crash: Optional[str] = None  # vLLM's own parsing fails on this token (the exception text)


def _yaml_tokens(cfg: ServeConfig, table: OptionTable, version: Version,
                 ignored: Dict[str, Tuple[Setting, str]]) -> List[_Tok]:
    """Replay vLLM's `--config` loader over the YAML layer for `version`."""
    tokens: List[_Tok] = []
    serve = cfg.entrypoint == "serve"
    # The StoreBoolean dests the *reading* parser knows: under `vllm serve` that is the
    # top-level parser, which has none (utils.py `_load_config_file`, 0.7.3-0.10.x).
    store_boolean = set() if serve else {f.dest for f in table.flags.values()
                                         if _action(f) == "store_boolean"}
    for setting in cfg.config_settings:
        key, value = setting.key, setting.value

        def emit(*texts: str) -> None:
            tokens.append(_Tok("--" + key, setting, "yaml"))
            tokens.extend(_Tok(t, setting, "yaml", is_value=True) for t in texts)

        if version < BOOL_AS_FLAG:
            emit(_py_str(value))            # 0.6.3: every value is `--k str(value)`
            continue
        if isinstance(value, bool):
            if value:
                emit()
            elif version >= NO_FORM_FROM_YAML:
                no_key = "--no-" + key
                if not serve and no_key in table.options:
                    tokens.append(_Tok(no_key, setting, "yaml"))
                else:
                    _drop(ignored, table, setting, _false_reason(cfg, version, key, table))
            elif key in store_boolean:
                emit(_py_str(value))
            else:
                _drop(ignored, table, setting, _false_reason(cfg, version, key, table))
            continue
        if isinstance(value, list) and version >= LISTS_EXPANDED:
            if value:
                emit(*[_py_str(item) for item in value])
            else:
                _drop(ignored, table, setting, "vLLM drops an empty list from --config files "
                                               "(0.10.2+), so the flag keeps its default")
            continue
        if isinstance(value, dict) and version >= DICTS_AS_JSON:
            emit(json.dumps(value, default=str))
            continue
        emit(_py_str(value))
    return tokens


def _drop(ignored: Dict[str, Tuple[Setting, str]], table: "OptionTable", setting: Setting,
          why: str) -> None:
    name = _name_for(table, setting.key)
    ignored[name] = (dataclasses.replace(setting, name=name), why)


def _py_str(value: Any) -> str:
    return str(value)


def _name_for(table: OptionTable, key: str) -> str:
    option, found, _, _ = table.resolve("--" + key.replace("_", "-"))
    return found.flag.dest if found is not None else normalize_key(key)


def _false_reason(cfg: ServeConfig, version: Version, key: str, table: OptionTable) -> str:
    known = _name_for(table, key) in table.flags
    tail = "" if known else f" (`{key}` is not a flag of this vLLM either)"
    if cfg.entrypoint == "serve":
        return f"vllm serve drops `false` values from --config files (0.7.3+){tail}"
    if version >= NO_FORM_FROM_YAML:
        return (f"vLLM drops `false` from --config files unless `--no-{key}` exists "
                f"(write the key with dashes){tail}")
    return f"vLLM drops `false` values from --config files (0.7.3+){tail}"


def _preprocess(tokens: List[_Tok], version: Version) -> List[_Tok]:
    """Replay FlexibleArgumentParser.parse_args's rewriting of option tokens for `version`."""
    out: List[_Tok] = []
    for index, tok in enumerate(tokens):
        text = tok.text
        if tok.is_value:
            out.append(tok)
            continue
        if text.startswith("--"):
            if "=" in text:
                key, value = text.split("=", 1)
                out.append(dataclasses.replace(tok, text=f"{_dash_key(key, version)}={value}"))
            else:
                out.append(dataclasses.replace(tok, text=_dash_key(text, version)))
            continue
        if version >= DOTTED_KEYS and text.startswith("-O") and text != "-O" and text[2] != ".":
            level = text[3:] if text[2] == "=" else text[2:]
            if version >= O_IS_OPT_LEVEL:
                out.append(dataclasses.replace(tok, text="--optimization-level"))
                out.append(_Tok(level, tok.origin, tok.layer, is_value=True))
            else:
                out.append(dataclasses.replace(tok, text=f"-O.level={level}"))
            continue
        nxt = tokens[index + 1].text if index + 1 < len(tokens) else None
        if version >= DOTTED_KEYS and text == "-O" and nxt in ("0", "1", "2", "3"):
            new = "--optimization-level" if version >= O_IS_OPT_LEVEL else "-O.level"
            out.append(dataclasses.replace(tok, text=new))
            continue
        if version >= O_IS_OPT_LEVEL and text.startswith("-O."):
            out.append(dataclasses.replace(tok, text="-cc" + text[2:]))
            continue
        out.append(tok)
    if version >= DOTTED_KEYS:
        out = _merge_dotted(out)
    return out


def _dash_key(key: str, version: Version) -> str:
    body = key[2:]
    if version >= DOTTED_KEYS:
        head, dot, tail = body.partition(".")
        return "--" + head.replace("_", "-") + dot + tail
    return "--" + body.replace("_", "-")


def _merge_dotted(tokens: List[_Tok]) -> List[_Tok]:
    """Merge `--x.y v` / `--x.y=v` / `--x.y+ a,b` into one trailing `--x '{"y": v}'` (0.9+)."""
    delete = set()
    merged: Dict[str, Dict[str, Any]] = {}
    origins: Dict[str, _Tok] = {}
    for index, tok in enumerate(tokens):
        text = tok.text
        # vLLM takes every token that starts with "-" and holds a "." for a dotted key, values
        # included: `--gpu-memory-utilization -0.1` loses its value (utils.py, 0.9+).
        if index in delete or not (text.startswith("-") and "." in text):
            continue
        if "=" in text:
            head, value_str = text.split("=", 1)
            if "." not in head:
                continue
        else:
            if index + 1 >= len(tokens):
                # processed_args[i + 1] past the end
                tokens[index] = dataclasses.replace(tok, crash="IndexError: list index out of range "
                                                    f"(vLLM reads {text!r} as a dotted --key.sub option)")
                continue
            head, value_str = text, tokens[index + 1].text
            delete.add(index + 1)
        value: Any
        if head.endswith("+"):
            head = head[:-1]
            value_str = json.dumps(value_str.split(","))
        key, *keys = head.split(".")
        try:
            value = json.loads(value_str)
        except ValueError:
            value = value_str
        for part in reversed(keys):
            value = {part: value}
        _dict_update(merged.setdefault(key, {}), value if isinstance(value, dict) else {})
        origins[key] = tok
        delete.add(index)
    if not merged:
        return tokens
    out = [tok for index, tok in enumerate(tokens) if index not in delete]
    for key, value in merged.items():
        origin = origins[key]
        out.append(dataclasses.replace(origin, text=key, is_value=False))
        out.append(_Tok(json.dumps(value), origin.origin, origin.layer, is_value=True))
    return out


def _dict_update(original: Dict[str, Any], update: Dict[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(original.get(key), dict):
            _dict_update(original[key], value)
        elif isinstance(value, list) and isinstance(original.get(key), list):
            original[key] += value
        else:
            original[key] = value


# --- argparse -------------------------------------------------------------------------------


def _option_strings(flag: Flag) -> List[str]:
    """Return a flag's option strings in argparse's order (BooleanOptionalAction.__init__)."""
    strings: List[str] = []
    for option in ["--" + flag.name.lstrip("-")] + list(flag.aliases):
        strings.append(option)
        if _action(flag) == "boolean_optional" and option.startswith("--"):
            strings.append("--no-" + option[2:])
    return strings


def inverse_options(flag: Flag, inverses: Dict[str, str]) -> List[str]:
    """Return the `--disable-x` spellings 0.33's EnableDisableAction adds to `--enable-x`."""
    if _action(flag) != "boolean_optional":
        return []
    return [inverse + option[len(prefix):] for option in ["--" + flag.name] + list(flag.aliases)
            for prefix, inverse in inverses.items() if option.startswith(prefix)]


def _display(flag: Flag) -> str:
    """Return the option as argparse names it in errors: every option string, joined by `/`."""
    return "/".join(_option_strings(flag))


def _nargs(flag: Flag) -> Optional[str]:
    return flag.nargs if flag.nargs is None else str(flag.nargs)


def _check_choice(flag: Flag, option: str, value: Any) -> None:
    if not flag.choices or value is None:
        return
    if value in flag.choices or str(value) in {str(c) for c in flag.choices}:
        return
    choices = ", ".join(repr(c) for c in flag.choices)
    raise _BadValue(f"invalid choice: {value!r} (choose from {choices})")


class _Parse:
    """One argparse pass over the processed tokens, recording what each dest ends up as."""

    def __init__(self, cfg: ServeConfig, table: OptionTable, version: Version):
        self.cfg = cfg
        self.table = table
        self.version = version
        self.values: Dict[str, Tuple[Setting, Any, str]] = {}   # dest -> (origin, value, option)
        self.unknown: List[Setting] = []
        self.rejected: Dict[str, Tuple[Setting, str]] = {}
        self.duplicates: List[Tuple[Setting, Setting]] = []
        self.model_tag: Optional[Setting] = None
        self._last: Dict[Tuple[str, str], Setting] = {}

    def reject(self, name: str, origin: Setting, message: str) -> None:
        self.rejected.setdefault(name, (dataclasses.replace(origin, name=name), message))

    def run(self, tokens: List[_Tok]) -> None:
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
                self.unknown.append(origin)

    def positional(self, tok: _Tok) -> None:
        if tok.layer == "cli" and self.cfg.entrypoint == "serve" and self.model_tag is None:
            self.model_tag = tok.origin
            return
        # argparse: `unrecognized arguments: True` (e.g. 0.6.3's `--enforce-eager True`).
        name = _name_for(self.table, tok.origin.key) if tok.layer == "yaml" else normalize_key(tok.text)
        self.reject(name, tok.origin, f"unrecognized arguments: {tok.text}")

    def optional(self, tok: _Tok, option: str, found: _Option, explicit: Optional[str],
                 tokens: List[_Tok], index: int) -> int:
        flag = found.flag
        action = _action(flag)
        dest = flag.dest
        origin = tok.origin
        option = _display(flag)
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
        if explicit is not None:
            strings = [explicit]
        else:
            want_many = nargs in ("+", "*") or (nargs or "").isdigit()
            while index < len(tokens) and tokens[index].crash is None and \
                    (tokens[index].is_value or not is_option(tokens[index].text)):
                strings.append(tokens[index].text)
                index += 1
                if not want_many and len(strings) == 1:
                    break
                if (nargs or "").isdigit() and len(strings) == int(nargs):
                    break
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
                _check_choice(flag, option, item)
        except _BadValue as exc:
            self.reject(dest, origin, f"argument {option}: {exc}")
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


# --- the entry point ------------------------------------------------------------------------


def read_as_vllm(cfg: ServeConfig, facts: Facts) -> ServeConfig:
    """Return a new ServeConfig as vLLM `facts.version` will see it (keyed by argparse dest).

    `args` holds what argparse stores per dest (only what the user set; defaults stay in
    facts), `model` the model vLLM will load, and `unknown`/`rejected`/`ignored` what it
    refuses or drops. With an empty flag table (facts not extracted) the keys are kept as
    written, normalised, and nothing is judged unknown.
    """
    version = release(facts.version)
    out = dataclasses.replace(cfg, args={}, ignored=dict(cfg.ignored), unknown=[],
                              rejected={}, duplicates=list(cfg.duplicates),
                              read_by=facts.version)
    if not facts.flags:
        out.args = {name: dataclasses.replace(s, name=name) for name, s in cfg.args.items()}
        return out

    table = OptionTable(facts)
    yaml_tokens = _yaml_tokens(cfg, table, version, out.ignored)
    cli_tokens = [_Tok(s.value, s, "cli") for s in cfg.argv]

    # Config tokens go right after the subcommand, and after the model if it is given
    # positionally (`_pull_args_from_config`), so the command line wins. Before 0.10.2 the
    # api_server's first token is taken for a subcommand and stays in front.
    split = 0
    if cli_tokens and cfg.entrypoint == "serve" and not is_option(cli_tokens[0].text):
        split = 1
    elif cli_tokens and cfg.entrypoint == "api_server" and cfg.config_file is not None \
            and version < LISTS_EXPANDED:
        split = 1
    tokens = _preprocess(cli_tokens[:split] + yaml_tokens + cli_tokens[split:], version)

    parse = _Parse(cfg, table, version)
    parse.run(tokens)

    for dest, (origin, value, option) in parse.values.items():
        if dest == "help" or dest in parse.rejected:
            continue
        setting = dataclasses.replace(origin, name=dest, value=value)
        if dest == "config" and origin.source == "cli":
            out.ignored["config"] = (setting, "vLLM only loads a config file given as "
                                              "`--config FILE`; `--config=FILE` is accepted "
                                              "and never read")
            continue
        if dest == "model":
            out.model = setting
            continue
        if origin.source == "yaml" and _mangled(origin.value, value, version):
            kind = "a list" if isinstance(origin.value, list) else "a mapping"
            fix = "write it as a JSON string" if isinstance(origin.value, dict) else \
                "pass the values on the command line"
            why = (f"vLLM {facts.version} passes {kind} from a --config file on as its Python "
                   f"text {str(origin.value)!r}, not as values; {fix}")
            out.ignored[dest] = (dataclasses.replace(origin, name=dest), why)
            continue
        out.args[dest] = setting
    out.unknown = parse.unknown
    out.rejected = parse.rejected
    out.duplicates.extend(parse.duplicates)

    # `vllm serve MODEL` (args.model = args.model_tag) wins over `--model`; a spec's `model:`
    # stands for that positional model.
    if parse.model_tag is not None:
        out.model = dataclasses.replace(parse.model_tag, key="model", name="model")
    elif cfg.kind == "spec" and cfg.model is not None:
        out.model = cfg.model
    elif cfg.kind == "command" and "model" not in parse.values:
        out.model = None

    if cfg.config_file is not None:
        _check_config_file(cfg, out, version)
    return out


def _check_config_file(cfg: ServeConfig, out: ServeConfig, version: Version) -> None:
    """Add the fatal errors of `_pull_args_from_config` itself (utils.py) to out.rejected."""
    anchor = cfg.config_file
    assert anchor is not None
    if not str(anchor.value).lower().endswith((".yaml", ".yml")):
        ext = str(anchor.value).split(".")[-1]
        out.rejected["config"] = (anchor, f"Config file must be of a yaml/yml type. {ext} supplied")
        return
    if not cfg.config_loaded:
        # Neither from the input's folder nor from here: vLLM's open() raises before any flag.
        out.rejected["config"] = (anchor, f"[Errno 2] No such file or directory: '{anchor.value}'")
        return
    if cfg.entrypoint == "serve":
        positional = bool(cfg.argv) and not is_option(cfg.argv[0].value)
        if positional:
            return
        if version < MODEL_IN_CONFIG:
            out.rejected.setdefault("model", (anchor, "No model_tag specified! Please check your "
                                                      "command-line arguments."))
        elif cfg.config_loaded and not any(s.key == "model" for s in cfg.config_settings):
            out.rejected.setdefault("model", (anchor, "No model specified! Please specify model "
                                                      "either as a positional argument or in a "
                                                      "config file."))
    elif version < CONFIG_FIRST_OK:
        # Before 0.10.2 args[0] is kept in front as if it were a subcommand: with `--config`
        # first, `--config` ends up followed by the file's options.
        first = min(((t.line, t.column) for t in cfg.argv), default=None)
        if first is None or first > (anchor.line, anchor.column):
            out.rejected.setdefault("config", (anchor, "argument --config: expected one argument"))


def _mangled(written: Any, seen: Any, version: Version) -> bool:
    """Return whether a YAML list/dict reached vLLM only as its Python text."""
    if isinstance(written, list) and version < LISTS_EXPANDED:
        return not (isinstance(seen, list) and seen == written)
    if isinstance(written, dict) and version < DICTS_AS_JSON:
        return not isinstance(seen, dict)   # literal_eval (0.7-0.8 compilation_config) is fine
    return False


def option_names(facts: Facts) -> Sequence[str]:
    """Return every long option string of `facts` (for did-you-mean suggestions)."""
    return OptionTable(facts).long_names()
