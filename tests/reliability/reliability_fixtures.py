"""Fixtures of the reliability suite, imported by its test modules.

Not a conftest.py: tests import `conftest` by name (`from conftest import MID`), and a second
conftest.py on the path would shadow the one in tests/.
"""

from __future__ import annotations

import pytest

from devtools import reliability_harness as harness


@pytest.fixture(scope="session")
def source(vllm_site):
    """Return the real vLLM tree the worlds copy their files from."""
    return vllm_site(harness.VERSION)


@pytest.fixture(scope="session")
def expected(source, tmp_path_factory):
    """Return a function scenario name -> its clean run (traced once per session)."""
    done = {}

    def get(name: str) -> harness.Expected:
        if name not in done:
            scenario = harness.SCENARIO[name]
            done[name] = harness.expect(scenario, tmp_path_factory.mktemp(name), source)
        return done[name]

    return get
