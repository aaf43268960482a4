"""PO102 yaml-false-dropped."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from patchops.lint.input.serve_config import Setting
from patchops.lint.edits import insert_after, rename_key, replace_value
from patchops.lint.facts.model import Facts, Flag
from patchops.lint.reading.read_config import Fate, ReadConfig
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm import inputs, releases, routing
from patchops.lint.vllm.inputs import NONE_MEANS_FALSE

_UNSET = object()


def v1_forces_chunked_prefill(cfg: ReadConfig, facts: Facts) -> bool:
    """Return whether the V1 engine will run and force chunked prefill on (0.7.3 opt-in to 0.11)."""
    if not releases.V1_ENGINE <= releases.release(facts) < releases.CHUNKED_PREFILL_HONOURED:
        return False
    return routing.engine(cfg, facts).value == routing.V1


def default_of(name: str, facts: Facts) -> Any:
    """Return the resolved default of option `name` (`_UNSET` when unknown)."""
    if name in facts.field_defaults:
        return facts.field_defaults[name]
    flag = facts.flags.get(name)
    if flag is not None:
        return flag.default
    return _UNSET


def off_switch(flag: Optional[Flag]) -> Optional[str]:
    """Return the command-line tokens that turn boolean `flag` off, if the parser has any."""
    if flag is None:
        return None
    if flag.action == "boolean_optional":
        return f"--no-{flag.name}"
    if flag.action == "store_boolean":  # StoreBoolean (0.6.3-0.7.3) takes an explicit value
        return f"--{flag.name} false"
    return None


class YamlFalseDropped(Rule):
    """
    ## What it does
    Flags `key: false` (or `no`/`off`) in a config file that `vllm serve` drops without a
    word, when the flag's default is not already false.

    ## Why is this bad?
    vLLM turns each YAML key into argv tokens (`_load_config_file`, vllm/utils.py): `true`
    becomes a bare `--key`, and from 0.7.3 a `false` adds nothing at all. Its special case for
    StoreBoolean flags looks at the top-level parser, never at the `serve` sub-parser, and
    the 0.30+ `--no-key` handling has the same blind spot, so under `vllm serve` the value is
    always lost. `enable_prefix_caching: false` or `enable_chunked_prefill: false` therefore
    do nothing: vLLM keeps its default (on, for V1). A `false` whose default is already false
    changes nothing and is not reported.

    ## Fix
    Pass the off switch on the command line (`vllm serve MODEL --config serve.yaml
    --no-enable-prefix-caching`) where the flag has one, or leave the key out. In YAML the
    switch is a key too: `no-enable-prefix-caching: true` becomes `--no-enable-prefix-caching`
    (a StoreBoolean flag, 0.7.3, takes the quoted word `"false"`). `lint --fix` writes that
    key, or adds the switch after a launch command's `--config FILE`; where the V1 engine
    forces chunked prefill on anyway it leaves the key for you to remove.
    """

    code = "PO102"
    name = "yaml-false-dropped"
    severity = "warning"
    versions = ">=0.7.3"
    needs = Needs(optional=("hardware.compute_capability", "hardware.platform", "model"))
    fixable = "safe"
    vllm_message = None  # vLLM says nothing: the value never reaches argparse

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  enable-prefix-caching: true\n"
                "  max-model-len: 4096\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\ntrust_remote_code: false\n", kind="config"),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct --no-enable-prefix-caching\n", kind="command"),
    ]
    INVALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                "  enable-prefix-caching: false\n", at=(4, 3),
                fixed="model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n"
                      "  no-enable-prefix-caching: true\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nenable_chunked_prefill: false\n"
                "max_num_batched_tokens: 4096\n", kind="config", vllm="0.11.0", at=(2, 1)),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  enable_prefix_caching: no  # no reuse\n",
                vllm="0.10.1.1", at=(3, 3),
                fixed="model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  no_enable_prefix_caching: true  # no reuse\n"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for outcome in sorted(cfg.outcomes_of(Fate.IGNORED), key=lambda o: o.setting.line):
            name, setting = outcome.dest, outcome.setting
            if setting.source != "yaml" or setting.value is not False:
                continue
            flag = facts.flags.get(name)
            if flag is not None and not inputs.is_boolean(flag) and inputs.yaml11_word(setting):
                continue  # `swap_space: off`: yaml-11-boolean explains it
            given = cfg.args.get(name)
            if given is not None and given.source == "cli":
                continue  # the command line sets it, whatever the file said
            default = default_of(name, facts)
            if default is False or default is None and name in NONE_MEANS_FALSE:
                continue  # dropping it changes nothing
            yield self._finding(cfg, facts, name, setting, flag, default)

    def _finding(self, cfg: ReadConfig, facts: Facts, name: str, setting: Setting,
                 flag: Optional[Flag], default: Any) -> Diagnostic:
        raw = setting.raw or "false"
        what = f'the value {raw} of "{setting.key}"'
        if raw != "false":
            what += " (false to YAML)"
        message = f"{what} is dropped by vllm serve {facts.version}"
        dropped = "vllm serve turns a false value from a config file into no argument at all"
        if flag is None:
            explanation = f"{dropped}, and vLLM {facts.version} has no --{name.replace('_', '-')} flag either"
            return self.diagnostic(cfg, setting, message, explanation=explanation, fields=(name,),
                                   fix="remove the key (check its name: unknown keys with other "
                                       "values stop vLLM)")
        if not inputs.is_boolean(flag):
            shown = f" ({default!r})" if default not in (None, _UNSET) else ""
            keeps = f"so {name} keeps its default{shown}"
        elif default is True:
            keeps = "so the flag stays on (its default)"
        elif name in ("enable_prefix_caching", "enable_chunked_prefill"):
            keeps = "so vLLM picks the value itself, which is on for generative models on the V1 engine"
        else:
            keeps = "so vLLM uses its own default"
        explanation = f"{dropped}, {keeps}"
        switch = off_switch(flag)
        if name == "enable_chunked_prefill" and v1_forces_chunked_prefill(cfg, facts):
            fix = (f"remove the key: the V1 engine of vLLM {facts.version} turns chunked prefill on "
                   "for generative models even with --no-enable-chunked-prefill (it is honoured on "
                   "V0, VLLM_USE_V1=0 before 0.11, and from vLLM 0.12)")
        elif switch:
            edits = self._switch_edits(cfg, setting, flag, switch)
            fix = self._switch_fix(cfg, setting, flag, switch, edits)
            return self.diagnostic(cfg, setting, message, explanation=explanation, fields=(name,), fix=fix,
                                   edits=edits,
                                   edit_title=f"pass {switch}")
        elif not inputs.is_boolean(flag):
            fix = f"write the value you want for {name} (a number or a quoted string)"
        else:
            fix = f"remove the key: vLLM {facts.version} has no way to switch {name} off"
        return self.diagnostic(cfg, setting, message, explanation=explanation, fields=(name,), fix=fix)

    @staticmethod
    def _switch_fix(cfg: ReadConfig, setting: Setting, flag: Flag, switch: str, edits) -> str:
        """Return the fix in the words of the edit `lint --fix` makes, or the switch to pass."""
        if not edits or None in edits:
            return f"pass {switch} on the vllm serve command line instead, and remove the key"
        if len(edits) == 2:        # the key renamed to `no-x` and given `true`
            return f"write {edits[0].content}: true (vLLM reads it as {switch})"
        if len(edits) == 1 and flag.action == "store_boolean" and cfg.kind != "command":
            return f'write {setting.key}: "false" (quoted, vLLM reads the word)'
        return f"pass {switch} after --config {cfg.config_file.value} on the command line"

    @staticmethod
    def _switch_edits(cfg: ReadConfig, setting: Setting, flag: Flag, switch: str):
        """Return the edits that pass `switch` where vLLM reads it, or () when none is exact.

        Written in this YAML: the `no-` key (`--no-x`), or the quoted word for a StoreBoolean
        flag. A key of a command's `--config FILE`: the switch after that file on the command
        line, which wins over the file (the file is left as it is: other launches may read it).
        """
        if setting.key_span is not None and setting.file is None:
            if flag.action == "store_boolean":
                return [replace_value(cfg, setting, '"false"')]
            dashed = "-" in setting.key or "_" not in setting.key
            key = ("no-" + flag.name) if dashed else ("no_" + flag.name.replace("-", "_"))
            return [rename_key(cfg, setting, key), replace_value(cfg, setting, "true")]
        if cfg.kind == "command" and cfg.config_file is not None:
            return [insert_after(cfg, cfg.config_file, " " + switch)]
        return ()
