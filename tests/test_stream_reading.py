"""The fast paths of stream reading (issue 20's stream-fidelity bench) decide as the general paths do.

SSEParser reads a stream of LF line ends an event at a time, and the client's stream accumulator reads a chunk of
the usual shape as a typed Struct; anything else takes the general path. These properties feed generated streams
and chunks, of usual and unusual shapes, to both and compare everything that comes out.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ocllm.run.client import _StreamAccumulator
from ocllm.run.sse import SSEParser

# Pieces of event streams: data lines of JSON or not, blank lines, comments, named events, error lines, a
# byte order mark, multi-byte characters (split anywhere by the chunking).
PIECES = st.sampled_from([
    b"data: ", b"data:", b'{"a": 1}', b'{"b": "\xc3\xa9"}', b"[DONE]", b"\n", b"\n\n", b": keep-alive\n",
    b"event: error\n", b"event: other\n", b"error: boom\n", b"id: 3\n", b"x", b" ", b"\xef\xbb\xbf", b"\xc3",
])  # fmt: skip


def events_of(chunks: list[bytes]) -> list[str]:
    parser = SSEParser()
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    return events + parser.close()


def split(stream: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({min(c, len(stream)) for c in cuts})
    return [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]


# Chunks as the network cuts them: mostly at the writes of whole pieces, sometimes anywhere.
CHUNKED = st.lists(st.lists(PIECES, max_size=6).map(b"".join), max_size=8)


@settings(max_examples=600, deadline=None)
@given(CHUNKED, st.lists(st.integers(0, 400), max_size=6))
def test_lf_streams_read_fast_give_the_events_crlf_streams_read_line_by_line_give(
    chunks: list[bytes], cuts: list[int]
) -> None:
    # A stream with a CR anywhere is read line by line (the general path); the same stream with LF line ends is
    # read an event at a time. Both must give the same events, however the network cuts the bytes.
    lf = b"".join(chunks)
    crlf = lf.replace(b"\n", b"\r\n")
    whole = events_of([crlf])
    assert events_of(chunks) == whole
    assert events_of(split(lf, cuts)) == whole == events_of(split(crlf, cuts))


# Fields mostly of the types a server sends (the typed reading's domain), sometimes of any other.
ANY = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 2), st.floats(0, 1), st.just([]), st.just({}), st.just([1]),
    st.sampled_from(["", "x"]),
)  # fmt: skip
TEXT = st.sampled_from([None, "", "", "x", "B", "é"])
INDEX = st.one_of(st.just(0), st.just(0), st.just(1))


def mostly(usual: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`usual` nine times in ten, else a value of any type."""
    return st.integers(0, 9).flatmap(lambda i: usual if i else ANY)


DELTAS = mostly(
    st.fixed_dictionaries(
        {}, optional={k: mostly(TEXT) for k in ("content", "reasoning_content", "reasoning", "role")}
    )
)
CHOICES = mostly(
    st.fixed_dictionaries(
        {}, optional={"index": mostly(INDEX), "delta": DELTAS, "finish_reason": mostly(TEXT), "logprobs": ANY}
    )
)
CHUNKS = st.fixed_dictionaries(
    {},
    optional={
        "id": mostly(TEXT), "model": mostly(TEXT), "choices": mostly(st.lists(CHOICES, max_size=3)),
        "usage": mostly(st.one_of(st.none(), st.just({"completion_tokens": 3}))), "error": mostly(st.none()),
        "object": ANY,
    },
)  # fmt: skip
DATA = st.one_of(
    CHUNKS.map(json.dumps), CHUNKS.map(json.dumps), st.sampled_from(["[DONE]", " [DONE] ", "", "{", "[1]", "{} {}"])
)


def read(data: list[str], typed: bool) -> list[Any]:
    acc = _StreamAccumulator(0.0, None)

    def general(d: str) -> Any:  # as `handle` read every event before the typed reading
        if d.strip() == "[DONE]":
            acc.done = True
            return None
        return acc._handle_any(d)

    said = [acc.handle(d) if typed else general(d) for d in data]
    response = acc.response()
    # Times differ between the two readings; whether a first token was seen must not.
    return [said, acc.done, acc.finish_reason, {**vars(response), "latency_s": None, "ttft_s": response.ttft_s is None}]


@settings(max_examples=1000, deadline=None)
@given(st.lists(DATA, max_size=6))
def test_the_typed_reading_of_chunks_decides_as_the_general_one(data: list[str]) -> None:
    assert read(data, typed=True) == read(data, typed=False)
