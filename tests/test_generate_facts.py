"""`scripts/generate_facts.py --new` asks an index for the final releases no pack holds.

The index is a local HTTP stand-in serving PyPI's simple JSON API (PEP 691), as pip reads it.
"""

from __future__ import annotations

import http.server
import importlib.util
import json
import threading
from pathlib import Path

import pytest

from patchops.core.errors import PatchopsError
from patchops.host import pypi
from patchops.lint.facts.model import shipped_versions

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("generate_facts", ROOT / "scripts" / "generate_facts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _wheel(version: str, **extra) -> dict:
    return {"filename": f"vllm-{version}-cp38-abi3-manylinux1_x86_64.whl", "url": f"vllm-{version}.whl",
            "hashes": {}, **extra}


@pytest.fixture
def index():
    """Serve `files` (set by the test) at /simple/vllm/ and return (base URL, the list, the requests)."""
    files, asked = [], []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append((self.path, self.headers.get("Accept")))
            if self.path != "/simple/vllm/":
                self.send_error(404)
                return
            body = json.dumps({"meta": {"api-version": "1.1"}, "name": "vllm", "files": files}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/simple", files, asked
    server.shutdown()


def test_final_releases_leave_out_rc_dev_local_and_sdists(index):
    url, files, asked = index
    files += [_wheel("0.9.0"), _wheel("0.9.0rc1"), _wheel("0.9.1.dev3"), _wheel("0.9.0.1", yanked="broken"),
              {"filename": "vllm-0.9.2.tar.gz", "url": "x", "hashes": {}}, _wheel("0.10.0"), _wheel("0.10.0")]
    assert pypi.final_releases("vllm", url) == ["0.9.0", "0.9.0.1", "0.10.0"]   # a yanked wheel still counts
    assert asked == [("/simple/vllm/", "application/vnd.pypi.simple.v1+json")]


def test_new_releases_are_those_no_pack_holds(index):
    url, files, _ = index
    files += [_wheel(v) for v in shipped_versions()] + [_wheel("0.5.4"), _wheel("99.0.0"), _wheel("99.1.0rc1")]
    assert _script().new_releases(url) == ["99.0.0"]   # 0.5.4 is older than facts ship for


def test_new_with_nothing_new_changes_nothing(index, capsys):
    url, files, _ = index
    files += [_wheel(v) for v in shipped_versions()]
    packs = sorted((ROOT / "src" / "patchops" / "lint" / "facts" / "shipped").iterdir())
    before = {p: p.read_bytes() for p in packs}
    assert _script().main(["--new", "--index-url", url]) == 0
    assert f"new final releases on {url}: none" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in packs} == before


def test_an_index_that_fails_is_one_clear_error(index):
    url, _, _ = index
    with pytest.raises(PatchopsError, match=r"could not list the releases of nothing-here at .*: HTTP Error 404"):
        pypi.final_releases("nothing-here", url)
