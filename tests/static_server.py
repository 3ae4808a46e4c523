"""A static file server on a free localhost port, and a browser context that cannot reach anything
else: shared by the offline tests of ``make site`` and ``make lite`` (``test_site.py``,
``test_lite.py``)."""

from __future__ import annotations

import functools
import http.server
import socketserver
import threading
from pathlib import Path

from browser_support import free_port


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript",
                      ".json": "application/json", ".whl": "application/octet-stream"}

    def log_message(self, *args) -> None:      # quiet
        pass


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class StaticServer:
    """``with StaticServer(folder) as server: server.url("/index.html")``."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.port = free_port()
        self._server = None

    def __enter__(self) -> "StaticServer":
        handler = functools.partial(_Handler, directory=str(self.root))
        self._server = _Server(("127.0.0.1", self.port), handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


def offline_context(browser, *, viewport=None, allowed=("http://127.0.0.1:", "file://", "data:", "blob:")):
    """A browser context in which every request outside ``allowed`` prefixes is aborted; returns
    ``(context, blocked)`` where ``blocked`` collects the URLs that were refused."""
    context = browser.new_context(viewport=viewport or {"width": 1280, "height": 800},
                                  service_workers="block")
    blocked: list[str] = []

    def route(request_route):
        url = request_route.request.url
        if url.startswith(allowed):
            request_route.continue_()
        else:
            blocked.append(url)
            request_route.abort()

    context.route("**/*", route)
    return context, blocked
