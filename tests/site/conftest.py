"""Site test fixtures: the hand-written sample data, a built site, a loopback server, a browser."""

from __future__ import annotations

import http.server
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
DATA = HERE / "fixtures" / "data"
REPO = HERE.parents[1]


def load_documents(root: Path = DATA) -> dict[str, Any]:
    """The four data documents of a data folder, as the build passes them in."""

    def read(p: Path) -> Any:
        return json.loads(p.read_text(encoding="utf-8"))

    return {
        "index": read(root / "index.json"),
        "series": {p.stem: read(p) for p in sorted((root / "series").glob("*.json"))},
        "pointers": read(root / "pointers.json"),
        "build_info": read(root / "build-info.json"),
    }


@pytest.fixture(scope="session")
def documents() -> dict[str, Any]:
    return load_documents()


def artifacts_dir() -> Path:
    out = Path(os.environ.get("TEST_ARTIFACTS") or REPO / "tests" / "artifacts")
    out.mkdir(parents=True, exist_ok=True)
    return out


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def serve(root: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    """A threaded static server for `root` on an ephemeral loopback port."""

    class Handler(_Quiet):
        def __init__(self, *a: Any, **k: Any) -> None:
            super().__init__(*a, directory=str(root), **k)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"
