"""A real HTTP server on 127.0.0.1 that misbehaves as the server path does in the reports the preflight answers
(issue 44): a model that answers right, behind a server that puts the answer only in the reasoning field (content
null), reasons with thinking off, keeps only the last N tokens of a prompt without a word, leaves calls as text,
whose budget cuts the answers, whose chat template drops the system message, or that applies stop strings to the
reasoning. Each misbehaviour is a keyword of `MisbehavingServer`; none is a well-configured
server. Standard library only; one thread."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

CODE_WORD = "PELICAN"


class MisbehavingServer:
    def __init__(
        self,
        *,
        answer_in_reasoning: bool = False,
        thinks_anyway: bool = False,
        keep_last: int | None = None,
        calls_as_text: bool = False,
        budget_cuts: bool = False,
        drops_system: bool = False,
        stop_in_reasoning: bool = False,
        model: str = "m",
    ) -> None:
        self.faults = {
            "answer_in_reasoning": answer_in_reasoning, "thinks_anyway": thinks_anyway, "keep_last": keep_last,
            "calls_as_text": calls_as_text, "budget_cuts": budget_cuts, "drops_system": drops_system,
            "stop_in_reasoning": stop_in_reasoning,
        }  # fmt: skip
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> MisbehavingServer:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completion a well-behaved model would give, through this server's faults."""
        faults = self.faults
        messages = body.get("messages") or []
        if faults["drops_system"]:  # the template writes no system message: the model never sees it
            messages = [m for m in messages if m.get("role") != "system"]
        system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system")
        text = "\n".join(str(m.get("content") or "") for m in messages)
        prompt_tokens = max(1, len(text) // 4)
        kept = text
        if faults["keep_last"] is not None and prompt_tokens > faults["keep_last"]:
            kept, prompt_tokens = text[-faults["keep_last"] * 4 :], faults["keep_last"]  # the start dropped, silently
        thinking = (body.get("chat_template_kwargs") or {}).get("enable_thinking", True)
        reasoning = "Let me think about it." if thinking or faults["thinks_anyway"] else None
        calls = None
        finish = "stop"
        last = str(messages[-1].get("content") or "") if messages else ""
        if body.get("tools") and "weather" in last:
            call = {"name": body["tools"][0]["function"]["name"], "arguments": {"city": "Paris"}}
            if faults["calls_as_text"]:
                content = f"<tool_call>\n{json.dumps(call)}\n</tool_call>"
            else:
                content = ""
                calls = [{"id": "call_1", "type": "function",
                          "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]  # fmt: skip
                finish = "tool_calls"
        elif "BANANA" in system:
            content = "BANANA"
        elif "17 + 25" in last:
            content = "42"
            stops = body.get("stop") or []
            stop = stops if isinstance(stops, str) else stops[0] if stops else None
            if "marker" in last and stop and reasoning is not None:
                reasoning = f"{reasoning} {stop}\nSo the sum is 42."
                if faults["stop_in_reasoning"]:  # the stop string, matched in the thinking, ends the reply there
                    reasoning, content = reasoning[: reasoning.index(stop)], None
        elif "code word" in last:
            content = CODE_WORD if CODE_WORD in kept else "I do not know."
        else:
            content = "The answer is A."
            if faults["budget_cuts"]:
                content, finish = "The answer is", "length"
        if faults["answer_in_reasoning"] and calls is None:
            reasoning, content = f"{reasoning or ''} {content}".strip(), None
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
        if calls is not None:
            message["tool_calls"] = calls
        usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": 8}
        if reasoning is not None:
            usage["completion_tokens_details"] = {"reasoning_tokens": 5}
        return {
            "id": "cmpl-1", "object": "chat.completion", "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage,
        }  # fmt: skip

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def _json(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": outer.model, "object": "model"}]})
                else:
                    self._json(404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                outer.requests.append(body)
                self._json(200, outer.answer(body))

        return Handler
