"""PO103 yaml-11-boolean."""

from __future__ import annotations

from typing import Iterator, Optional

from patchops.lint.edits import replace_value
from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts, Flag
from patchops.lint.reading.read_config import Fate, Outcome, ReadConfig
from patchops.lint.rule import Diagnostic, Example, Rule, with_vllm_message
from patchops.lint.vllm import inputs, releases, wording

def harmless(flag: Flag) -> bool:
    """Return whether dropping a false leaves what `off`/`no` means anyway (0, or the choice none)."""
    default = flag.default
    if flag.type in ("int", "float", "human_int") and default in (0, 0.0) and default is not False:
        return True
    return isinstance(default, str) and default.lower() == "none"


class Yaml11Boolean(Rule):
    """
    ## What it does
    Flags `yes`, `no`, `on` and `off` written unquoted in a config file for an option that
    takes a value rather than an on/off switch.

    ## Why is this bad?
    vLLM reads config files with PyYAML's `yaml.safe_load`, which follows YAML 1.1: `on` is
    the boolean true, `off` is false. A boolean then takes vLLM's boolean path
    (`_load_config_file`): true becomes a bare `--key` (argparse: "expected one argument")
    and false is dropped, so `swap-space: off` keeps the 4 GiB default and `load-format: on`
    stops the launch; vLLM 0.6.x passes the text `True`/`False` instead. (Environment
    variables in a serve spec's `env:` are kept as text, so they are not affected.)

    On an on/off switch (`trust-remote-code: yes`) the boolean is what was meant and vLLM gets
    it; that is reported as info, since YAML 1.2 readers and people take the word for text.

    ## Fix
    Quote the word (`"off"`) if you meant the text, or write the number you meant (`0`). On a
    switch write `true` or `false`: `lint --fix` does (the value vLLM reads stays the same).
    """

    code = "PO103"
    name = "yaml-11-boolean"
    severity = "warning"
    versions = ">=0"
    fixable = "safe"
    # argparse, when true becomes a bare `--flag` that needs a value
    vllm_message = "vllm serve: error: argument {flag}: expected one argument"

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  trust-remote-code: true\n"
                "env:\n  VLLM_USE_V1: \"1\"\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nswap_space: 0\nenforce_eager: true\n", kind="config"),
        # dropped, but the default is what `off` means: nothing changes
        Example("model: Qwen/Qwen3-8B\nargs:\n  per-request-spec-decode-metrics: off\n",
                vllm="0.33.0"),
    ]
    INVALID = [
        Example("model: Qwen/Qwen3-Embedding-8B\nargs:\n  runner: pooling\n  convert: no\n",
                vllm="0.12.0", at=(4, 3)),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nmax_model_len: 4096\nswap_space: off\n",
                kind="config", at=(3, 1)),
        # A switch: vLLM gets the boolean meant; the fix spells it as YAML 1.2 does.
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  trust-remote-code: yes  # for Qwen\n",
                at=(3, 3), severity="info",
                fixed="model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  trust-remote-code: true  # for Qwen\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nswap_space: 0\nenforce_eager: On\n", kind="config",
                vllm="0.10.1.1", at=(3, 1), severity="info",
                fixed="model: Qwen/Qwen2.5-7B-Instruct\nswap_space: 0\nenforce_eager: true\n"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for setting in inputs.written_settings(cfg):
            word = inputs.yaml11_word(setting)
            if word is None:
                continue
            flag = facts.flags.get(setting.name) or facts.flag(setting.key)
            if flag is None:
                continue  # unknown keys: unknown-flag
            outcome = cfg.outcome_of(setting)
            fate = outcome.fate if outcome is not None else None
            if inputs.is_boolean(flag):
                if fate is Fate.ACCEPTED:  # a dropped false: yaml-false-dropped
                    yield self._switch(cfg, setting, word)
                continue
            if flag.nargs == "?" and inputs.YAML11_WORDS[word]:
                continue  # a bare --flag takes its const, which is what `yes` means (--hf-token)
            if fate is Fate.IGNORED and harmless(flag):
                continue
            yield self._option(cfg, facts, setting, word, flag, outcome)

    def _switch(self, cfg: ReadConfig, setting: Setting, word: str) -> Diagnostic:
        """A switch written yes/no/on/off: vLLM reads the boolean that was meant."""
        spelled = str(inputs.YAML11_WORDS[word]).lower()
        message = f'unquoted {word} in "{setting.key}: {word}" is the YAML 1.1 boolean {spelled}'
        explanation = f'vLLM reads it as meant, but YAML 1.2 readers and people take it for the word "{word}"'
        found = self.diagnostic(cfg, setting, message, explanation=explanation, fields=(setting.name,), severity="info",
                                fix=f"write {setting.key}: {spelled}",
                                edits=[replace_value(cfg, setting, spelled)])
        return with_vllm_message(found, None)       # vLLM says nothing: it works

    def _option(self, cfg: ReadConfig, facts: Facts, setting: Setting, word: str, flag: Flag,
                outcome: Optional[Outcome]) -> Diagnostic:
        option = "--" + flag.name
        value = inputs.YAML11_WORDS[word]
        vllm_message = None
        if outcome is not None and outcome.fate is Fate.REJECTED:
            what, severity = "vLLM's argument parser rejects it and vLLM exits", "error"
            vllm_message = wording.parser_error(cfg, outcome.detail)
        elif releases.release(facts) < releases.BOOL_AS_FLAG:
            # 0.6.3 passes str(value): the flag gets the text True/False
            what, severity = f'vLLM gets the text "{value}" instead', "warning"
        elif value:
            what, severity = f"vllm serve passes a bare {option}, without the word", "warning"
        else:
            default = flag.default
            keeps = f' ("{default}")' if isinstance(default, str) else ""
            if default is not None and not isinstance(default, str):
                keeps = f" ({default})"
            what, severity = f"vllm serve drops it, so {flag.dest} keeps its default{keeps}", "warning"
        message = (f'unquoted {word} in "{setting.key}: {word}" is the YAML boolean '
                   f'{str(value).lower()}, not the word "{word}"')
        choices = {str(c).lower(): str(c) for c in (flag.choices or ()) if c is not None}
        if flag.type in ("int", "float", "human_int") and not value:
            fix = f"write {setting.key}: 0 if you meant off"
        elif word.lower() in choices:
            fix = f'quote it ({setting.key}: "{choices[word.lower()]}") to pick the choice "{word}"'
        elif not value and "none" in choices:
            fix = f'write {setting.key}: {choices["none"]} if "{word}" meant none'
        elif choices:
            fix = f"write one of its choices: {', '.join(choices.values())}"
        else:
            fix = f'quote it ({setting.key}: "{word}") if you meant the word'
        found = self.diagnostic(cfg, setting, message, explanation=what, fields=(flag.dest,),
                                severity=severity, fix=fix)
        return with_vllm_message(found, vllm_message)
