"""A zero-cost OpenAI-compatible loopback server for the run benchmarks (issue 11), and its launcher.

    python bench/loopback.py --port PORT --model NAME [--reasoning-chars N] [--content-chars N] [--variants K]

A raw asyncio HTTP/1.1 server (keep-alive, Content-Length bodies) that answers every
`POST /v1/chat/completions` with one of K pre-encoded chat-completion responses, taken in turn, whatever
was asked, and `GET /v1/models` with the model. It reads no JSON and builds nothing per request, so what a
client measures against it is the client's own cost. Each answer's `reasoning_content` quotes ten format
examples ("FINAL: A", "Answer: (C)", ...), as real reasoning traces do; its `content` ends with
"FINAL: <letter>" (the letters A-D in turn across the variants).

`start_loopback(...)` runs it in its own process and returns the process and its base URL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import subprocess
import sys
import time
import urllib.request
from typing import Any

FORMAT_EXAMPLES = (
    "FINAL: A",
    "Answer: (C)",
    "FINAL: D",
    "The answer is (B)",
    "\\boxed{C}",
    "**Final Answer:** A",
    "answer: D",
    "FINAL: C",
    "Answer: B",
    "(A) is correct",
)
FILLER = (
    "The units digit rules out one option. Another one is far too large. The sum must be checked again. "
    "Adding the hundreds first gives the size. The tens carry over once. Only one candidate fits that. "
)


def reasoning_text(chars: int, letter: str) -> str:
    """About `chars` characters of reasoning that quotes the ten format examples, then settles on `letter`."""
    examples = ", ".join(FORMAT_EXAMPLES)
    head = f"Let me work through this. The answer has to be given in a fixed form, not like {examples}; only "
    head += "the form the prompt asks for counts. "
    tail = f"So the answer is {letter}."
    return head + _filler(chars - len(head) - len(tail)) + tail


def content_text(chars: int, letter: str, final: str | None = None) -> str:
    """The visible answer: about `chars` characters of working, then the final line (`final`, or FINAL: letter)."""
    final = final if final is not None else f"FINAL: {letter}"
    room = chars - len(final) - 2
    working = _filler(room).rstrip()
    return f"{working}\n\n{final}" if working else final


def _filler(chars: int) -> str:
    """At most `chars` characters of filler, cut after a whole sentence (or word)."""
    if chars <= 0:
        return ""
    text = (FILLER * (chars // len(FILLER) + 1))[:chars]
    end = text.rfind(". ")
    return text[: end + 2] if end >= 0 else text[: text.rfind(" ") + 1]


def http_response(body: bytes, status: str = "200 OK") -> bytes:
    head = f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode("ascii") + body


def chat_response(model: str, content: str, reasoning: str) -> bytes:
    doc = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "reasoning_content": reasoning},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 60, "completion_tokens": 400, "total_tokens": 460},
    }
    return http_response(json.dumps(doc).encode())


def models_response(model: str) -> bytes:
    doc = {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "loopback"}]}
    return http_response(json.dumps(doc).encode())


class _Connection(asyncio.Protocol):
    """One keep-alive connection: requests are framed by Content-Length and answered in order."""

    def __init__(self, chat: list[bytes], models: bytes, turn: list[int]) -> None:
        self.chat = chat
        self.models = models
        self.turn = turn  # shared by every connection: the next variant to send
        self.buffer = bytearray()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        assert self.transport is not None
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(self.buffer[:end]).lower()
            length = 0
            at = head.find(b"\r\ncontent-length:")
            if at >= 0:
                stop = head.find(b"\r\n", at + 2)
                length = int(head[at + 17 : stop if stop >= 0 else len(head)])
            if len(self.buffer) < end + 4 + length:
                return
            del self.buffer[: end + 4 + length]
            if head.startswith(b"post ") and b"/chat/completions" in head.split(b"\r\n", 1)[0]:
                self.transport.write(self.chat[self.turn[0] % len(self.chat)])
                self.turn[0] += 1
            elif head.startswith(b"get ") and b"/models" in head.split(b"\r\n", 1)[0]:
                self.transport.write(self.models)
            else:
                self.transport.write(http_response(b'{"error": "not found"}', "404 Not Found"))


async def serve(port: int, chat: list[bytes], models: bytes) -> None:
    loop = asyncio.get_running_loop()
    turn = [0]
    server = await loop.create_server(lambda: _Connection(chat, models, turn), "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_loopback(
    model: str, *, reasoning_chars: int = 500, content_chars: int = 0, variants: int = 1, final: str | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """The server in its own process; returns it and its base URL (…/v1) once it answers /v1/models. `final`: the
    content's last line instead of FINAL: B (a math answer, say)."""
    port = free_port()
    args = [
        sys.executable,
        __file__,
        "--port",
        str(port),
        "--model",
        model,
        "--reasoning-chars",
        str(reasoning_chars),
        "--content-chars",
        str(content_chars),
        "--variants",
        str(variants),
        *(["--final", final] if final is not None else []),
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, wait_until_serving(proc, port, "the loopback server")


def wait_until_serving(proc: subprocess.Popen[bytes], port: int, what: str) -> str:
    """The base URL of a server just started on `port`, once its /models answers (10 s at most)."""
    base = f"http://127.0.0.1:{port}/v1"
    for _ in range(200):
        try:
            urllib.request.urlopen(f"{base}/models", timeout=1).read()
            return base
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{what} did not start")


def answers(
    model: str, reasoning_chars: int, content_chars: int, variants: int, final: str | None = None
) -> list[bytes]:
    """The pre-encoded HTTP responses sent in turn: one (ending FINAL: B, or `final`), or `variants` ending A, B, C,
    D, …"""
    letters = "ABCD" if variants > 1 else "B"
    return [
        chat_response(
            model, content_text(content_chars, letters[i % 4 % len(letters)], final),
            reasoning_text(reasoning_chars, letters[i % 4 % len(letters)]),
        )
        for i in range(max(1, variants))
    ]  # fmt: skip


def answer_document(raw: bytes) -> dict[str, Any]:
    """The JSON document inside one pre-encoded response (to print its size and shape)."""
    return json.loads(raw.split(b"\r\n\r\n", 1)[1])


def machine() -> str:
    """CPU count and model, Python version: the line every benchmark prints first."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), cpu)
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()} on {platform.machine()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--reasoning-chars", type=int, default=500)
    parser.add_argument("--content-chars", type=int, default=0, help="0: the content is the final line alone")
    parser.add_argument("--variants", type=int, default=1, help="answers sent in turn, ending FINAL: A, B, C, D, …")
    parser.add_argument("--final", default=None, help="the content's last line instead of FINAL: B")
    args = parser.parse_args()
    chat = answers(args.model, args.reasoning_chars, args.content_chars, args.variants, args.final)
    asyncio.run(serve(args.port, chat, models_response(args.model)))


if __name__ == "__main__":
    main()
