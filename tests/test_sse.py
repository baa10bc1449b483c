"""ocllm.run.sse.SSEParser on its own: bytes in, in any pieces, the data of each complete event out."""

from __future__ import annotations

import json

import pytest

from ocllm.run.sse import SSEParser


def parse(*pieces: bytes | str) -> list[str]:
    """Every event the parser gives for `pieces`, fed one after the other, then the end of the stream."""
    parser = SSEParser()
    events: list[str] = []
    for piece in pieces:
        events += parser.feed(piece.encode() if isinstance(piece, str) else piece)
    return events + parser.close()


def every_split(text: str) -> list[list[bytes]]:
    """`text` as UTF-8, cut in two at every byte, and cut into single bytes."""
    data = text.encode()
    return [[data[:cut], data[cut:]] for cut in range(1, len(data))] + [[bytes([b]) for b in data]]


STREAM = 'data: {"a": "é"}\n\ndata: {"b": 2}\n\ndata: [DONE]\n\n'


def test_events_in_order() -> None:
    assert parse(STREAM) == ['{"a": "é"}', '{"b": 2}', "[DONE]"]


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_events_split_across_chunks_anywhere_give_the_same_events(line_end: str) -> None:
    # Including inside the two-byte "é" and between the CR and LF of a CRLF.
    text = STREAM.replace("\n", line_end)
    whole = parse(text)
    assert whole == ['{"a": "é"}', '{"b": 2}', "[DONE]"]
    for pieces in every_split(text):
        assert parse(*pieces) == whole, pieces


def test_an_event_is_given_as_soon_as_its_blank_line_arrives() -> None:
    parser = SSEParser()
    assert parser.feed(b'data: {"a": 1}\n') == []
    assert parser.feed(b"\n") == ['{"a": 1}']
    assert parser.feed(b"data: [DO") == []
    assert parser.feed(b"NE]\n\n") == ["[DONE]"]
    assert parser.close() == []


def test_comments_and_fields_a_chat_stream_does_not_use_are_ignored() -> None:
    text = ': keep-alive\n\nid: 7\nretry: 1000\nevent: message\n: still here\ndata: {"a": 1}\n\n:\n\n'
    assert parse(text) == ['{"a": 1}']


def test_several_data_lines_are_one_event_joined_by_newlines() -> None:
    assert parse('data: {"a":\ndata: 1}\n\n') == ['{"a":\n1}']
    assert parse("data: first line\ndata:second line\n\n") == ["first line\nsecond line"]


def test_a_final_event_without_a_blank_line_still_counts() -> None:
    assert parse('data: {"a": 1}\n\ndata: {"b": 2}') == ['{"a": 1}', '{"b": 2}']
    assert parse('data: {"a": 1}\n') == ['{"a": 1}']


def test_json_lines_without_blank_lines_between_them_are_separate_events() -> None:
    assert parse('data: {"a": 1}\ndata: {"b": 2}\ndata: [DONE]\n') == ['{"a": 1}', '{"b": 2}', "[DONE]"]


def test_a_byte_order_mark_at_the_start_is_dropped() -> None:
    assert parse("\ufeffdata: x\n\n") == ["x"]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('error: {"message": "out of memory", "code": 500}\n\n', {"message": "out of memory", "code": 500}),
        ("error: the slot was cancelled\n\n", {"message": "the slot was cancelled"}),
        ('event: error\ndata: {"error": {"message": "bad"}}\n\n', {"message": "bad"}),
        ("event: error\ndata: plain words\n\n", {"message": "plain words"}),
    ],
)
def test_errors_outside_data_events_become_error_events(text: str, error: dict[str, object]) -> None:
    (event,) = parse(text)
    assert json.loads(event) == {"error": error}


def test_an_event_name_applies_to_its_own_event_only() -> None:
    events = parse("event: error\ndata: broken\n\ndata: fine\n\n")
    assert json.loads(events[0]) == {"error": {"message": "broken"}} and events[1] == "fine"


def test_nothing_in_nothing_out() -> None:
    assert parse() == [] and parse("\n\n\n") == [] and parse(": only a comment") == []
