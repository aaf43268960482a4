"""PO611 flag-hardcoded-by-fork."""

from __future__ import annotations

from typing import Iterator, Optional, Tuple

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.input.serve_config import Setting
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Needs, Rule
from patchops.lint.vllm.platforms import COREX_EAGER_PATCHSET, COREX_HARDCODED


def literal_bool(source: str) -> Optional[bool]:
    """Return the bool a hardcoded keyword value's source text means, None for an expression."""
    text = source.strip()
    if text in ("True", "1"):
        return True
    if text in ("False", "0"):
        return False
    return None


def user_setting(cfg: ReadConfig, name: str) -> Optional[Tuple[Setting, bool]]:
    """Return (setting, value the user asked for) for boolean option `name`, wherever it ended up.

    A YAML `false` that `vllm serve` drops (cfg.dropped) still says what the user wanted;
    `--no-<name>` counts as false.
    """
    for key, wanted in ((name, None), ("no_" + name, False)):
        setting = cfg.args.get(key)
        dropped = cfg.dropped(key)
        if setting is None and dropped is not None:
            setting = dropped.setting
        if setting is None:
            continue
        value = setting.value
        if setting.source == "yaml":  # what was written (0.6.3 stores True for `enforce_eager: false`)
            for written in cfg.config_settings:
                if (written.line, written.column) == (setting.line, setting.column):
                    value = written.value
        if wanted is not None:
            return setting, wanted if value is not False else not wanted
        if isinstance(value, str):
            value = value.strip().lower() in ("1", "true", "yes", "on")
        return setting, bool(value)
    return None


class FlagHardcodedByFork(Rule):
    """
    ## What it does
    Flags `enforce_eager` or `disable_custom_all_reduce` set by the user (true or false)
    when the vLLM copy that will run passes a fixed value for it instead of `self.<flag>`;
    left unset, a hardcoded `True` is still reported (as a warning) where it costs something:
    `enforce_eager` always, `disable_custom_all_reduce` with tensor parallelism.

    ## Why is this bad?
    `EngineArgs` hands the two settings to the engine in exactly one place each:
    `ModelConfig(..., enforce_eager=self.enforce_eager)` and `ParallelConfig(...,
    disable_custom_all_reduce=self.disable_custom_all_reduce)`. Vendor forks (CoreX) replace
    them with `True`, so the flag is parsed and then thrown away: `--no-enforce-eager` still
    runs eager (no CUDA graphs, much slower decoding) and custom all-reduce stays off, with no
    message. When your value equals the fork's, the setting is only misleading: it would
    stop being honoured-by-accident the day someone changes the fork.

    Severity: error when your value differs from the fork's (the flag is silently ignored);
    warning when it agrees by accident, or when you left it unset and the hardcoded `True`
    still costs CUDA graphs or custom all-reduce.

    ## Fix
    Restore the two keywords with `patchops apply corex-eager-allreduce` (roll back with
    `patchops rollback`), or drop the setting if the fork's value is what you want.
    """

    code = "PO611"
    name = "flag-hardcoded-by-fork"
    severity = "error"
    versions = ">=0"
    needs = Needs(optional=("workload.concurrency",))
    vllm_message = None  # vLLM says nothing: the value is dropped inside EngineArgs

    VALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  enforce-eager: false\n"
                "  tensor-parallel-size: 4\n"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 4096\n",
                facts={"hardcoded": {"disable_custom_all_reduce": "True"}}),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct -tp 4 --enforce-eager\n", kind="command"),
    ]
    INVALID = [
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  tensor-parallel-size: 4\n"
                "  enforce-eager: false\n", facts={"hardcoded": {"enforce_eager": "True"}},
                at=(4, 3)),
        Example("vllm serve Qwen/Qwen2.5-7B-Instruct -tp 4 --disable-custom-all-reduce\n",
                kind="command", vllm="0.9.2",
                facts={"hardcoded": {"disable_custom_all_reduce": "True"}}, at=(1, 43), severity="warning"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\ntensor_parallel_size: 4\nenforce_eager: true\n",
                kind="config", facts={"hardcoded": {"enforce_eager": "True"}}, at=(3, 1),
                severity="warning"),
        Example("model: Qwen/Qwen2.5-7B-Instruct\nargs:\n  max-model-len: 8192\n"
                "workload:\n  concurrency: [1, 8]\n",
                facts={"hardcoded": {"enforce_eager": "True"}}, at=(5, 3), severity="warning"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for name, (call, effect) in COREX_HARDCODED.items():
            source = facts.hardcoded.get(name)
            found = user_setting(cfg, name) if source is not None else None
            if found is None:
                if source is not None and literal_bool(source) and self._costs(cfg, name):
                    yield self._unset(cfg, name, source, call, effect)
                continue
            setting, wanted = found
            fixed = literal_bool(source)
            said = f"setting {setting.key}" + ("" if setting.source == "cli" else f": {str(wanted).lower()}")
            if fixed is None:
                message = f"{said} has no say: this copy passes {name}={source}"
                explanation = f"this copy passes {name}={source} to {call}, whatever the flag says"
                severity = "warning"
            elif fixed != wanted:
                consequence = effect if fixed else f"{name} stays false"
                message = f"{said} is ignored: this copy hardcodes {name}={source}"
                explanation = f"this copy hardcodes {name}={source} in {call}, so {consequence} regardless"
                severity = "error"
            else:
                message = f"{said} has no effect: this copy hardcodes it"
                explanation = (f"this copy hardcodes {name}={source} in {call}; it agrees with you only "
                               "by accident")
                severity = "warning"
            fix = f"patchops apply {COREX_EAGER_PATCHSET} (restores {name}=self.{name})"
            if severity == "warning":
                fix += ", or remove the setting"
            yield self.diagnostic(cfg, setting, message, explanation=explanation, fields=(name,),
                                  severity=severity, fix=fix)

    @staticmethod
    def _costs(cfg: ReadConfig, name: str) -> bool:
        """Return whether a hardcoded True costs this config anything (custom all-reduce needs TP > 1)."""
        if name == "enforce_eager":
            return True
        tp = cfg.args.get("tensor_parallel_size")
        try:
            return tp is not None and int(tp.value) > 1
        except (TypeError, ValueError):
            return False

    def _unset(self, cfg: ReadConfig, name: str, source: str, call: str, effect: str) -> Diagnostic:
        if name == "enforce_eager":  # the cost shows at the concurrency that runs without graphs
            at = cfg.context.get("workload.concurrency") or cfg.model
        else:
            at = cfg.args.get("tensor_parallel_size")
        message = f"this copy hardcodes {name}={source}: no flag can change it"
        return self.diagnostic(cfg, at, message, explanation=f"it is hardcoded in {call}, so {effect}",
                               fields=(name,), severity="warning",
                               fix=f"patchops apply {COREX_EAGER_PATCHSET} "
                                   f"(restores {name}=self.{name})")
