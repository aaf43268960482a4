"""PO901 unknown-parser-name."""

from __future__ import annotations

import difflib
from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import inputs, messages, plugins
from patchops.lint.vllm.plugins import PARSERS


class UnknownParserName(Rule):
    """
    ## What it does
    Flags a `--tool-call-parser` (with `--enable-auto-tool-choice`) or `--reasoning-parser`
    name that the vLLM copy does not register. The names come from the copy's registries
    (`@ToolParserManager.register_module("hermes")`, the `_TOOL_PARSERS_TO_REGISTER` tables),
    since argparse cannot list them. The reasoning parser is checked whenever it is given,
    except on releases that still have `--enable-reasoning` (0.7.3-0.9.2), which check it only
    with that flag; where argparse itself lists the registry as `choices` (0.8.5-0.10
    `--reasoning-parser`), `invalid-flag-value` reports it at parse time.

    ## Why is this bad?
    The server exits before loading the model: `KeyError: 'invalid tool call parser: hermes2
    (chose from { granite,hermes,... })'`. Parser names are added in nearly every release, so
    a name from a newer release's docs fails on an older copy.

    ## Fix
    Use one of the names the copy registers, or load your own with `--tool-parser-plugin` /
    `--reasoning-parser-plugin` (0.12+): with a plugin file that exists, or a module name on
    0.30+, the check only warns and names the plugin, which may register the name; with a
    plugin file that does not exist it stays an error (parser-plugin-not-found says why).
    """

    code = "PO901"
    name = "unknown-parser-name"
    severity = "error"
    versions = ">=0.7"
    vllm_message = "invalid tool call parser: {name} (chose from { {names} })"
    explains = (messages.TOOL_PARSER_CHECK, messages.REASONING_PARSER_CHECK,)
    VALID = [
        Example("model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: hermes\n"),
        # Without auto tool choice the parser is never looked up.
        Example("model: m\nargs:\n  tool-call-parser: hermes9\n", vllm="0.10.1.1"),
        Example("model: m\nargs:\n  reasoning-parser: qwen3\n", vllm="0.10.1.1"),
    ]
    INVALID = [
        Example("model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: qwen3_coder\n",
                vllm="0.8.5", at=(4, 3)),
        Example("vllm serve m --reasoning-parser deepseek_r9\n", kind="command", vllm="0.33.0", at=(1, 14)),
        # A plugin file that does not exist registers nothing (parser-plugin-not-found).
        Example("model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: my_parser\n"
                "  tool-parser-plugin: /nonexistent/patchops-example/my_tool_parser.py\n", vllm="0.10.1.1",
                at=(4, 3)),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        for registry, (dest, wording) in PARSERS.items():
            names = facts.registries.get(registry)
            found = inputs.setting(cfg, dest)
            flag = facts.flags.get(dest)
            if names is None or found is None or not isinstance(found.value, str) or not found.value \
                    or (flag is not None and flag.choices):
                continue   # argparse lists the registry itself (0.8.5-0.10 --reasoning-parser): PO107
            if not self._looked_up(cfg, facts, registry) or found.value in names:
                continue
            listed = ",".join(names)
            plugin = plugins.parser_plugin(cfg, facts, registry)
            has_plugin = plugin is not None and not plugin.missing
            if has_plugin:
                kind = "module" if plugin.path is None else "file"
                tail = f"plugin {kind} {plugin.shown} is loaded first and may register it"
            elif plugin is not None:
                tail = (f"the plugin {plugin.value} does not exist, so nothing registers it: "
                        f"vLLM {facts.version} exits before loading the model")
            else:
                tail = f"vLLM {facts.version} exits before loading the model"
            close = difflib.get_close_matches(str(found.value), list(names), n=1, cutoff=0.6)
            yield self.diagnostic(
                cfg, found, f"{wording} {found.value!r} is not registered in vLLM {facts.version}",
                explanation=f"it has {len(names)}: {', '.join(names[:8])}{', ...' if len(names) > 8 else ''}; "
                f"{tail}",
                fields=(dest,), severity="warning" if has_plugin else None,
                fix=(f"did you mean {close[0]!r}? " if close else "")
                + f"use one of the registered names: {', '.join(names)}",
                vllm_message=f"invalid {wording}: {found.value} (chose from {{ {listed} }})")

    @staticmethod
    def _looked_up(cfg: ReadConfig, facts: Facts, registry: str) -> bool:
        """Return whether vLLM looks the name up (api_server / validate_api_server_args)."""
        if registry == "tool_call_parser":
            return bool(inputs.bool_value(cfg, "enable_auto_tool_choice"))
        if "enable_reasoning" in facts.flags:   # 0.7.3-0.9.2: gated on --enable-reasoning
            return bool(inputs.bool_value(cfg, "enable_reasoning"))
        return True
