#!/usr/bin/env python3
"""Write the README's rule table from ALL_RULES (code, name, severity, vLLM versions, stage).

    python scripts/readme_rules.py            # rewrite the table between its markers
    python scripts/readme_rules.py --check    # exit 1 when the README's table is stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from patchops.cli.render.rules import rules_markdown_table  # noqa: E402
from patchops.lint.rules import ALL_RULES  # noqa: E402

START = "<!-- rule table: written by scripts/readme_rules.py -->\n"
END = "<!-- end of rule table -->\n"


def with_table(readme: str) -> str:
    """Return `readme` with the generated table between START and END."""
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return head + START + rules_markdown_table(ALL_RULES) + END + tail


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether the table is current")
    args = parser.parse_args()
    path = ROOT / "README.md"
    old = path.read_text()
    new = with_table(old)
    if args.check:
        if new != old:
            print("README.md's rule table is stale: run python scripts/readme_rules.py", file=sys.stderr)
            return 1
        return 0
    if new != old:
        path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
