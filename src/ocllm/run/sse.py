"""Server-sent events (text/event-stream) decoding for streamed chat completions.

`SSEParser` turns the bytes of an event stream, in whatever pieces the network delivers them, into the data
of each complete event, as text: usually one JSON chunk of a chat completion, or "[DONE]". It knows nothing of
chat completions; the client reads the events it returns.

It lives apart from the HTTP client because framing is a pure function of the bytes, with rules of its own
(line ends, comments, multi-line data, events cut by the end of the stream) that are tested on their own,
without a server, at every split point a network could produce.
"""

from __future__ import annotations

import re

import msgspec

__all__ = ["SSEParser"]

_BOM = "\ufeff".encode()


class SSEParser:
    """Incremental text/event-stream decoder: bytes in, the data of each complete event out.

    It follows the SSE rules: CR, LF or CRLF line ends; a byte order mark at the very start is dropped; lines
    starting with ":" are comments (often keep-alives) and ignored; several "data:" lines of one event are
    joined with "\\n"; a blank line ends an event; "id:" and "retry:" lines are ignored (an OpenAI-compatible
    chat stream uses neither). Lines are decoded as UTF-8 only once whole, so a character split between two
    network reads arrives intact.

    Failures reported outside a data event are handed on as the data event `{"error": ...}` that an OpenAI
    stream would carry: an "error:" line (older llama.cpp servers), or an event named "error" ("event: error"
    then "data: ...").

    Two leniencies, for servers that bend the rules: an event cut off by the end of the stream (no blank line
    after it) still counts, given by `close()`; and data lines not separated by blank lines are split again
    into one event each when their joined text is not JSON but each line is (or is "[DONE]").
    """

    _LINE_END = re.compile(rb"\r\n|\r|\n")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._data: list[str] = []
        self._event = ""  # the "event:" name of the event being read
        self._at_start = True

    def feed(self, chunk: bytes) -> list[str]:
        """Take the next bytes of the stream; return the data of every event they complete, in order."""
        self._buffer += chunk
        if self._at_start:
            if len(self._buffer) < len(_BOM) and not self._LINE_END.search(self._buffer):
                return []  # no whole line yet, and maybe the first bytes of a byte order mark
            if self._buffer.startswith(_BOM):
                del self._buffer[: len(_BOM)]
            self._at_start = False
        if b"\r" in self._buffer:
            return self._feed_any()
        # The common case, LF line ends only, read an event at a time: a stream of 30,000 characters of reasoning
        # is 7,500 events, and reading them line by line cost more than the rest of the run. An event of one
        # "data: " line is taken whole; any other goes through `_line`, as in the general path.
        events: list[str] = []
        blocks = self._buffer.split(b"\n\n")  # each ends with a blank line, but the last
        tail = blocks.pop()
        for block in blocks:
            if not self._data and not self._event and block.startswith(b"data: ") and b"\n" not in block:
                events.append(block[6:].decode("utf-8", errors="replace"))
                continue
            for raw in block.split(b"\n"):
                self._line(bytes(raw), events)
            self._dispatch(events)  # the blank line after the block
        *lines, self._buffer = tail.split(b"\n")
        for raw in lines:
            self._line(bytes(raw), events)
        return events

    def _feed_any(self) -> list[str]:
        """Any line ends (CR, LF, CRLF), the byte order mark: line by line."""
        events: list[str] = []
        consumed = 0
        for match in self._LINE_END.finditer(self._buffer):
            if match.group() == b"\r" and match.end() == len(self._buffer):
                break  # maybe the first half of a CRLF whose LF is still on its way
            self._line(bytes(self._buffer[consumed : match.start()]), events)
            consumed = match.end()
        del self._buffer[:consumed]
        return events

    def close(self) -> list[str]:
        """The stream has ended: return the data of the event it left unfinished, if any."""
        events: list[str] = []
        if self._buffer:
            self._line(bytes(self._buffer), events)
            self._buffer.clear()
        self._dispatch(events)
        return events

    def _line(self, raw: bytes, events: list[str]) -> None:
        line = raw.decode("utf-8", errors="replace")
        if not line:
            self._dispatch(events)
            return
        if line.startswith(":"):
            return  # a comment, often a keep-alive
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value.strip()
        elif name == "error":
            # Older llama.cpp servers report a failure as an "error:" line rather than a data event.
            self._data.append(_as_error_event(value))

    def _dispatch(self, events: list[str]) -> None:
        event, self._event = self._event, ""
        if not self._data:
            return
        lines, self._data = self._data, []
        if event == "error":  # "event: error" then "data: ...": the data describes a failure
            lines = [_as_error_event("\n".join(lines))]
        joined = "\n".join(lines)
        if len(lines) > 1 and not _is_json(joined) and all(_is_json(x) or x.strip() == "[DONE]" for x in lines):
            events.extend(lines)
        else:
            events.append(joined)


def _as_error_event(value: str) -> str:
    """An error reported outside a data event, as the data event {"error": ...} an OpenAI stream carries."""
    try:
        detail = msgspec.json.decode(value)
    except msgspec.DecodeError:
        detail = {"message": value}
    if isinstance(detail, dict) and isinstance(detail.get("error"), dict | str):
        detail = detail["error"]
    return msgspec.json.encode({"error": detail or {"message": "error event"}}).decode()


def _is_json(text: str) -> bool:
    try:
        msgspec.json.decode(text)
    except msgspec.DecodeError:
        return False
    return True
