"""A scripted server of one kind (llama.cpp, vLLM, SGLang, Ollama) for the advice tests: a real HTTP server on
127.0.0.1 that answers the routes ocllm identifies a kind by as that kind does, takes the kind's own flags on its
command line, and answers a request with tools as that kind would with those flags:

- llama.cpp (`/props`): `--no-jinja` refuses tools with HTTP 500 "tools param requires --jinja flag", as
  llama-server does; otherwise (Jinja on, the default since 2025-11-27) the model's calls come back as text.
- vLLM (`/version`): tool_choice "auto" without `--enable-auto-tool-choice` and `--tool-call-parser` is refused with
  vLLM's HTTP 400; otherwise the calls come back as text (the format the model wrote is one the parser does not read).
- SGLang (`/get_server_info`, which reports its `tool_call_parser`), Ollama (`/api/version`): the calls as text.

    python scripted_server.py --port P --kind KIND [--answer FORMAT] [the kind's flags ...]

`--answer` is how the "model" writes its call: `fenced_json` (a JSON call in a ```json fence, what
Qwen2.5-Coder-0.5B wrote on llama-server), `hermes` (<tool_call> tags). `--on-required` is what a request with
tool_choice "required" gets: `runaway` (the default) is what that llama-server gave (issue 41): the JSON block, then
newlines until max_tokens, finish_reason "length", no tool_calls: the constraint did not take; `as_auto` answers as
to "auto" (the call as text, finish_reason "stop"). Standard library only."""

from __future__ import annotations

import argparse
import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ANSWERS = {
    "fenced_json": 'I will look it up.\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    "hermes": '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
}
OWNED_BY = {"llama.cpp": "llamacpp", "vllm": "vllm", "sglang": "sglang", "ollama": "library"}
VLLM_AUTO = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--kind", choices=sorted(OWNED_BY), required=True)
    parser.add_argument("--answer", choices=sorted(ANSWERS), default="fenced_json")
    # The kinds' own flags (each read as its server reads it; the last of --jinja / --no-jinja wins).
    parser.add_argument("--jinja", dest="jinja", action="store_true", default=True)
    parser.add_argument("--no-jinja", dest="jinja", action="store_false")
    parser.add_argument("--enable-auto-tool-choice", action="store_true")
    parser.add_argument("--tool-call-parser", default=None)
    parser.add_argument("--on-required", choices=("runaway", "as_auto"), default="runaway")
    parser.add_argument("-m", "--model", default="scripted")
    args = parser.parse_args()

    identity: dict[str, tuple[str, dict[str, Any]]] = {
        "llama.cpp": ("/props", {"default_generation_settings": {"n_ctx": 4096}, "build_info": "b7300-scripted"}),
        "vllm": ("/version", {"version": "0.11.0"}),
        "sglang": ("/get_server_info", {"model_path": args.model, "version": "0.5.0",
                                        "tool_call_parser": args.tool_call_parser}),
        "ollama": ("/api/version", {"version": "0.12.0"}),
    }  # fmt: skip

    def refusal(body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """The kind's answer to a request it is set up not to serve; None when it serves it."""
        if not body.get("tools"):
            return None
        if args.kind == "llama.cpp" and not args.jinja:
            return 500, {"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}
        auto = body.get("tool_choice", "auto") == "auto"
        if args.kind == "vllm" and auto and not (args.enable_auto_tool_choice and args.tool_call_parser):
            return 400, {"object": "error", "message": VLLM_AUTO, "type": "BadRequestError", "param": None, "code": 400}
        return None

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _json(self, status: int, body: dict[str, Any]) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            path, body = identity[args.kind]
            if self.path.rstrip("/") == "/v1/models":
                models = [{"id": args.model, "object": "model", "owned_by": OWNED_BY[args.kind]}]
                self._json(200, {"object": "list", "data": models})
            elif self.path == path:
                self._json(200, body)
            else:
                self._json(404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            refused = refusal(body)
            if refused is not None:
                self._json(*refused)
                return
            content, finish, tokens = ANSWERS[args.answer], "stop", 20
            if body.get("tool_choice") == "required" and args.on_required == "runaway":
                # One token a newline after the call, up to the request's limit: the answer ends only there.
                tokens = int(body.get("max_tokens") or 4096)
                content, finish = content + "\n" * max(tokens - 20, 1), "length"
            message = {"role": "assistant", "content": content}
            choice = {"index": 0, "message": message, "finish_reason": finish}
            usage = {"prompt_tokens": 20, "completion_tokens": tokens, "total_tokens": 20 + tokens}
            self._json(200, {"id": "x", "object": "chat.completion", "model": args.model, "choices": [choice],
                             "usage": usage})  # fmt: skip

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    # The bound port, not the asked one: a test that starts it itself asks for port 0 and reads it here.
    print(f"scripted {args.kind} server (pid {os.getpid()}) on 127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
