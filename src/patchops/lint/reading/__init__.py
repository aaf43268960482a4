"""What a given vLLM version will see from a ServeConfig: `read_as_vllm(cfg, facts)`.

vLLM turns a `--config` YAML back into argv tokens (`FlexibleArgumentParser._load_config_file`,
`load_config_file` from 0.10.2), inserts them after the subcommand, rewrites option names
(`_` -> `-`, `-O3`, dotted `--x.y` keys) and hands everything to argparse, which also accepts
unique prefixes. This package replays those steps over the YAML layer and the command-line layer
with the version's flag table (`facts.flags`) and returns a ReadConfig (`read_config.py`): the
values keyed by argparse dest (== EngineArgs field), typed, and each setting's Outcome:

* `unknown`  - keys no flag matches (argparse: `unrecognized arguments`);
* `rejected` - known keys whose value argparse refuses (bad type, bad choice, a stray `True`
  after a store_true flag in 0.6.3, ambiguous abbreviations): vLLM exits at launch;
* `ignored`  - values vLLM drops or mangles without a word (`false` from YAML, lists before
  0.10.2, `--config=FILE`);
* `accepted` - the rest, read.

Each branch names the vLLM file and release it follows.
The steps are the modules here: `config_file` (the YAML layer -> argv tokens),
`command_line` (the parser's rewriting of option tokens), `option_table` (the version's
option strings and prefix matching), `value_types` (argparse `type` conversion) and
`argparse_pass` (the parse itself).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict

from patchops.lint.input.serve_config import ServeConfig, Setting
from patchops.lint.facts.model import Facts
from patchops.lint.input.launch_command import is_option
from patchops.lint.reading.argparse_pass import ArgparsePass
from patchops.lint.reading.command_line import Token, rewrite
from patchops.lint.reading.config_file import yaml_tokens
from patchops.lint.reading.option_table import option_table
from patchops.lint.reading.read_config import Fate, Outcome, ReadConfig, read_config
from patchops.lint.vllm.releases import (CONFIG_FIRST_OK, DICTS_AS_JSON, LISTS_EXPANDED,
                                         MODEL_IN_CONFIG, Version, release)


def read_as_vllm(cfg: ServeConfig, facts: Facts) -> ReadConfig:
    """Return what vLLM `facts.version` reads of `cfg`, which stays as written.

    With an empty flag table (facts not extracted) the keys are kept as written, normalised,
    and every setting is accepted.
    """
    version = release(facts.version)
    if not facts.flags:
        return read_config(cfg, facts.version, {name: dataclasses.replace(s, name=name)
                                                for name, s in cfg.args.items()},
                           cfg.model, duplicates=cfg.duplicates)

    table = option_table(facts)
    ignored: Dict[str, Outcome] = {}
    config_tokens = yaml_tokens(cfg, table, version, ignored)
    cli_tokens = [Token(s.value, s, "cli") for s in cfg.argv]

    # Config tokens go right after the subcommand, and after the model if it is given
    # positionally (`_pull_args_from_config`), so the command line wins. Before 0.10.2 the
    # api_server's first token is taken for a subcommand and stays in front.
    split = 0
    if cli_tokens and cfg.entrypoint == "serve" and not is_option(cli_tokens[0].text):
        split = 1
    elif cli_tokens and cfg.entrypoint == "api_server" and cfg.config_file is not None \
            and version < LISTS_EXPANDED:
        split = 1
    tokens = rewrite(cli_tokens[:split] + config_tokens + cli_tokens[split:], version)

    parse = ArgparsePass(cfg, table, version)
    parse.run(tokens)

    args: Dict[str, Setting] = {}
    model = cfg.model
    for dest, (origin, value, option) in parse.values.items():
        if dest == "help" or (dest in parse.rejected and dest not in parse.by_chance):
            continue
        setting = dataclasses.replace(origin, name=dest, value=value)
        if dest == "config" and origin.source == "cli":
            ignored["config"] = Outcome(Fate.IGNORED, setting, "config",
                                        "vLLM only loads a config file given as `--config FILE`; "
                                        "`--config=FILE` is accepted and never read")
            continue
        if dest == "model":
            model = setting
            continue
        if origin.source == "yaml" and _mangled(origin.value, value, version):
            kind = "a list" if isinstance(origin.value, list) else "a mapping"
            fix = "write it as a JSON string" if isinstance(origin.value, dict) else \
                "pass the values on the command line"
            why = (f"vLLM {facts.version} passes {kind} from a --config file on as its Python "
                   f"text {str(origin.value)!r}, not as values; {fix}")
            ignored[dest] = Outcome(Fate.IGNORED, dataclasses.replace(origin, name=dest), dest, why)
            continue
        args[dest] = setting

    # `vllm serve MODEL` (args.model = args.model_tag) wins over `--model`; a spec's `model:`
    # stands for that positional model.
    if parse.model_tag is not None:
        model = dataclasses.replace(parse.model_tag, key="model", name="model")
    elif cfg.kind == "spec" and cfg.model is not None:
        model = cfg.model
    elif cfg.kind == "command" and "model" not in parse.values:
        model = None

    rejected = parse.rejected
    if cfg.config_file is not None:
        _check_config_file(cfg, rejected, version)
    return read_config(cfg, facts.version, args, model,
                       [*rejected.values(), *ignored.values(), *parse.unknown],
                       [*cfg.duplicates, *parse.duplicates])


def _check_config_file(cfg: ServeConfig, rejected: Dict[str, Outcome], version: Version) -> None:
    """Add the fatal errors of `_pull_args_from_config` itself (utils.py) to `rejected`."""
    anchor = cfg.config_file
    assert anchor is not None

    def refuse(dest: str, message: str, first: bool = False) -> None:
        if not first or dest not in rejected:
            rejected[dest] = Outcome(Fate.REJECTED, anchor, dest, message)

    if not str(anchor.value).lower().endswith((".yaml", ".yml")):
        ext = str(anchor.value).split(".")[-1]
        refuse("config", f"Config file must be of a yaml/yml type. {ext} supplied")
        return
    if not cfg.config_loaded:
        # Neither from the input's folder nor from here: vLLM's open() raises before any flag.
        refuse("config", f"[Errno 2] No such file or directory: '{anchor.value}'")
        return
    if cfg.entrypoint == "serve":
        positional = bool(cfg.argv) and not is_option(cfg.argv[0].value)
        if positional:
            return
        if version < MODEL_IN_CONFIG:
            refuse("model", "No model_tag specified! Please check your command-line arguments.",
                   first=True)
        elif cfg.config_loaded and not any(s.key == "model" for s in cfg.config_settings):
            refuse("model", "No model specified! Please specify model either as a positional "
                            "argument or in a config file.", first=True)
    elif version < CONFIG_FIRST_OK:
        # Before 0.10.2 args[0] is kept in front as if it were a subcommand: with `--config`
        # first, `--config` ends up followed by the file's options.
        first = min(((t.line, t.column) for t in cfg.argv), default=None)
        if first is None or first > (anchor.line, anchor.column):
            refuse("config", "argument --config: expected one argument", first=True)


def _mangled(written: Any, seen: Any, version: Version) -> bool:
    """Return whether a YAML list/dict reached vLLM only as its Python text."""
    if isinstance(written, list) and version < LISTS_EXPANDED:
        return not (isinstance(seen, list) and seen == written)
    if isinstance(written, dict) and version < DICTS_AS_JSON:
        return not isinstance(seen, dict)   # literal_eval (0.7-0.8 compilation_config) is fine
    return False

