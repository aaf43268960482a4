"""settings.find: a pyproject.toml counts only when a line can start [tool.patchops]."""

from __future__ import annotations

import pytest

from patchops.core import settings

TABLES = [
    "[tool.patchops]\nignore = ['PO1']\n",
    "[ tool . \"patchops\" ]\nignore = ['PO1']\n",
    "[tool.patchops.hardware]\ngpus = 2\n",
    "[tool]\npatchops = {ignore = ['PO1']}\n",
    "tool.patchops.ignore = ['PO1']\n",
    "tool = {patchops = {ignore = ['PO1']}}\n",
]
NOT_OURS = [
    "[project]\nname = 'vllm-patchops'\n",
    "[project]\ndependencies = ['tomli']  # patchops.toml / [tool.patchops]\n",
    "# [tool.patchops]\n[tool.ruff]\nline-length = 100\n",
    "[tool.patchopsy]\nx = 1\n",
]


@pytest.mark.parametrize("text", TABLES)
def test_a_pyproject_holding_our_table_is_found_and_read(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text)
    assert settings.find(tmp_path) == tmp_path / "pyproject.toml"
    found = settings.load(start=tmp_path)
    assert found.ignore == ("PO1",) or found.hardware == {"gpus": 2}


@pytest.mark.parametrize("text", NOT_OURS)
def test_a_pyproject_naming_us_only_in_text_is_not_parsed(tmp_path, text):
    (tmp_path / "pyproject.toml").write_text(text)
    assert settings.find(tmp_path) is None
