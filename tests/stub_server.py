"""A small OpenAI-compatible server for the managed-server tests: a real HTTP server on 127.0.0.1, run as a
lane's `[server]` command, that can behave as servers do in the wild: ignore SIGTERM, print its API key (in
every spelling a log may hold it), and die after a number of requests.

    python stub_server.py --port P [--ignore-sigterm] [--print-key ENV] [--die-after N] [--latency S]

Every chat request is answered "FINAL: A" after `--latency` seconds. Standard library only."""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import signal
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def key_spellings(key: str) -> list[str]:
    """The key as a server's log may print it: plain, JSON-escaped, URL-encoded, base64, hex."""
    return [
        key,
        json.dumps(key)[1:-1],
        json.dumps(key)[1:-1].replace("/", "\\/"),
        urllib.parse.quote(key, safe=""),
        re.sub("%[0-9A-F]{2}", lambda m: m.group().lower(), urllib.parse.quote(key, safe="")),
        urllib.parse.quote_plus(key),
        base64.b64encode(key.encode()).decode(),
        base64.urlsafe_b64encode(key.encode()).decode(),
        base64.b64encode(f"user:{key}".encode()).decode(),  # HTTP basic auth
        key.encode().hex(),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--print-key", metavar="ENV")
    parser.add_argument("--die-after", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args()
    if args.ignore_sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    key = os.environ.get(args.print_key, "") if args.print_key else ""

    def say_key(when: str) -> None:
        if key:
            for spelling in key_spellings(key):
                print(f"{when}: --api-key {spelling} (Authorization: Bearer {spelling})", flush=True)

    served = 0
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _json(self, status: int, body: dict) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            self._json(200, {"object": "list", "data": [{"id": "stub", "object": "model"}]})

        def do_POST(self) -> None:
            nonlocal served
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                served += 1
                dying = args.die_after and served > args.die_after
            if dying:
                say_key("dying")
                os._exit(3)
            time.sleep(args.latency)
            message = {"role": "assistant", "content": "FINAL: A"}
            choice = {"index": 0, "message": message, "finish_reason": "stop"}
            usage = {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}
            body = {"id": "x", "object": "chat.completion", "model": "stub", "choices": [choice], "usage": usage}
            self._json(200, body)

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    say_key("starting")
    print(f"stub server (pid {os.getpid()}) on 127.0.0.1:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
