"""A local HTTP stand-in for the Hugging Face Hub: what huggingface_hub asks of it to fetch a file.

`hf_hub_download` sends `HEAD {endpoint}/{repo}/resolve/{revision}/{file}` and reads the
commit (X-Repo-Commit), the ETag and the size from the answer, then GETs the same URL. Errors
carry the Hub's `X-Error-Code` (RepoNotFound, GatedRepo, EntryNotFound, RevisionNotFound),
which the client turns into its own exception classes. Point a client at it with
`HF_ENDPOINT=stand_in.url`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Optional, Set
from urllib.parse import unquote

COMMIT = "0123456789abcdef0123456789abcdef01234567"
STALL_LIMIT = 30.0   # a stalled answer still ends, so the server always stops


class HubStandIn:
    """Serve `repos` (repo id -> file name -> JSON-ready content or bytes) on 127.0.0.1.

    `gated` repos answer 401 GatedRepo unless the request carries `Bearer {token}`;
    `stall` (seconds) delays every answer. `requests` lists (method, path) as they arrive.
    """

    def __init__(self, repos: Dict[str, Dict[str, object]], *, gated: Set[str] = frozenset(),
                 token: str = "hf_stand_in_token", stall: float = 0.0):
        self.repos = {repo: {name: _bytes(body) for name, body in files.items()}
                      for repo, files in repos.items()}
        self.gated, self.token, self.stall = set(gated), token, stall
        self.requests: List[tuple] = []
        self._stop = threading.Event()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "HubStandIn":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()

    def answer(self, method: str, path: str, auth: Optional[str]):
        """Return (status, headers, body) for one request."""
        self.requests.append((method, path))
        parts = unquote(path.split("?", 1)[0]).strip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            return 404, {"X-Error-Code": "RepoNotFound"}, b"not found"
        repo, revision, name = "/".join(parts[:2]), parts[3], "/".join(parts[4:])
        files = self.repos.get(repo)
        if files is None:
            return 401, {"X-Error-Code": "RepoNotFound"}, b"Repository not found"
        if repo in self.gated and auth != f"Bearer {self.token}":
            return 401, {"X-Error-Code": "GatedRepo"}, b"Access to this repo is restricted"
        if revision not in ("main", COMMIT):
            return 404, {"X-Error-Code": "RevisionNotFound"}, b"Revision not found"
        if name not in files:
            return 404, {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": COMMIT}, b"Entry not found"
        body = files[name]
        return 200, {"X-Repo-Commit": COMMIT, "ETag": f'"{hashlib.sha1(body).hexdigest()}"',
                     "Content-Type": "application/json"}, body

    def _handler(self):
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _reply(self, with_body: bool) -> None:
                if stand_in.stall:
                    stand_in._stop.wait(min(stand_in.stall, STALL_LIMIT))
                status, headers, body = stand_in.answer(self.command, self.path,
                                                        self.headers.get("Authorization"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                # No keep-alive: the client pools connections by port, and a later stand-in
                # may get this one's port; a pooled connection to a stopped server breaks.
                self.send_header("Connection", "close")
                self.close_connection = True
                self.end_headers()
                if with_body:
                    self.wfile.write(body)

            def do_HEAD(self):
                self._reply(False)

            def do_GET(self):
                self._reply(True)

            def log_message(self, *args):
                pass

        return Handler


def _bytes(body: object) -> bytes:
    return body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")

