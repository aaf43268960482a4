"""PO907 parser-plugin-not-found."""

from __future__ import annotations

from typing import Iterator

from patchops.lint.reading.read_config import ReadConfig
from patchops.lint.facts.model import Facts
from patchops.lint.rule import Diagnostic, Example, Rule
from patchops.lint.vllm import plugins
from patchops.lint.vllm.releases import PLUGIN_LOAD_FAILURE_LOGGED, release

MISSING = "/nonexistent/patchops-example/my_tool_parser.py"


class ParserPluginNotFound(Rule):
    """
    ## What it does
    Checks that the file given to `--tool-parser-plugin` (and `--reasoning-parser-plugin`,
    0.12+) exists, as given or relative to the input's folder. From 0.30 a plugin may also be
    a module name (`my_pkg.parsers`), which is not checked.

    ## Why is this bad?
    vLLM imports the plugin when the server starts. A missing file is logged, "Failed to load
    module 'my_tool_parser' from /path/my_tool_parser.py." with a FileNotFoundError
    traceback, and the server goes on without the parsers the plugin registers: a
    `--tool-call-parser` or `--reasoning-parser` naming one of them then stops the server
    (unknown-parser-name), and if the name is also built in, the built-in parser runs instead
    of yours. vLLM 0.6.3 does not catch the error: the server exits with FileNotFoundError.
    vLLM ignores a plugin value of 3 characters or fewer.

    ## Fix
    Give the plugin's absolute path, or a path relative to the folder the server starts in.
    """

    code = "PO907"
    name = "parser-plugin-not-found"
    severity = "warning"
    versions = ">=0"
    vllm_message = "Failed to load module '{module}' from {path}."
    VALID = [
        Example("model: m\nargs:\n  enable-auto-tool-choice: true\n  tool-call-parser: hermes\n"),
        # 0.30+: a module name is imported before it is taken as a path.
        Example("model: m\nargs:\n  tool-parser-plugin: my_company.tool_parsers\n", vllm="0.33.0"),
    ]
    INVALID = [
        Example(f"model: m\nargs:\n  tool-parser-plugin: {MISSING}\n", at=(3, 3)),
        Example(f"model: m\nargs:\n  reasoning-parser-plugin: {MISSING}\n", vllm="0.12.0", at=(3, 3)),
        Example(f"vllm serve m --tool-parser-plugin {MISSING}\n", kind="command", vllm="0.6.3.post1",
                at=(1, 14), severity="error"),
    ]

    def check(self, cfg: ReadConfig, facts: Facts) -> Iterator[Diagnostic]:
        crashes = release(facts) < PLUGIN_LOAD_FAILURE_LOGGED
        for registry in plugins.PLUGIN_FLAGS:
            plugin = plugins.parser_plugin(cfg, facts, registry)
            if plugin is None or not plugin.missing:
                continue
            flag = plugins.PLUGIN_FLAGS[registry]
            effect = ("exits at start-up" if crashes else
                      f"logs the failure and starts without the {registry.replace('_', ' ')}s it registers")
            yield self.diagnostic(
                cfg, plugin.setting,
                f"{flag} {plugin.value!r} is not a file",
                explanation=f"tried as given and from the input's folder; vLLM {facts.version} {effect}",
                fields=(flag,), severity="error" if crashes else None,
                fix="give the plugin file's absolute path",
                vllm_message=plugins.load_failure(facts, plugin))
