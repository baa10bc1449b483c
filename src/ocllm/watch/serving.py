"""The watch's page served on 127.0.0.1 (`--serve PORT`): the standard library's HTTP server in a thread, answering
GET / with the page as last drawn. Nothing else is served, and only this machine may connect."""

from __future__ import annotations

import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ocllm.errors import InputError

HOST = "127.0.0.1"


class PageServer:
    """Serves the latest page; `show` replaces it."""

    def __init__(self, port: int) -> None:
        self._page = b"<!doctype html><title>ocllm watch</title><p>waiting for the first reading</p>"
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?", 1)[0] not in ("/", "/index.html"):
                    self.send_error(HTTPStatus.NOT_FOUND)
                    return
                body = owner.page()
                self.send_response(HTTPStatus.OK)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass  # the terminal shows the table, not a line per request

        try:
            self._server = ThreadingHTTPServer((HOST, port), Handler)
        except OSError as exc:
            raise InputError(f"--serve {port}: cannot listen on {HOST}:{port} ({exc.strerror or exc})") from None
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="ocllm-watch-page", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self._server.server_address[1]}/"

    def page(self) -> bytes:
        with self._lock:
            return self._page

    def show(self, text: str) -> None:
        with self._lock:
            self._page = text.encode("utf-8")

    def __enter__(self) -> PageServer:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
