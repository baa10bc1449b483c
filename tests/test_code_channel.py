"""The channel between a function task's two boxes carries plain data and nothing else (scoring/code/harness/
channel.py; docs/scoring/code.md, "Trust"): what crosses comes back equal and of the same exact type, what cannot
cross is named, and the decoder builds no object of any other type whatever bytes it is given."""

from __future__ import annotations

import collections
import decimal
import fractions
import json
import math
import os
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ocllm.scoring.code.harness import channel

_SCALARS = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary()
    | st.complex_numbers(allow_nan=False)
)  # fmt: skip
_HASHABLE = st.recursive(
    _SCALARS, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=4), max_leaves=8
)
PLAIN = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.tuples(inner, inner) | st.dictionaries(_HASHABLE, inner, max_size=5)
    | st.sets(_HASHABLE, max_size=5) | st.frozensets(_HASHABLE, max_size=5),
    max_leaves=30,
)  # fmt: skip


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same exact types all the way down (1 and 1.0 and True are not the same here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return bool(a == b)


@settings(max_examples=300, deadline=None)
@given(PLAIN)
def test_plain_data_comes_back_equal_and_of_the_same_types(value: Any) -> None:
    assert _same(channel.decode(channel.encode(value)), value)


@pytest.mark.parametrize(
    "value",
    [
        2**200, -(2**63), 2**63, float("nan"), float("inf"), -0.0, 1e-320, complex("nan+infj"), b"\x00\xff",
        bytearray(b"ab"), "\ud800 lone surrogate", collections.Counter("abracadabra"),
        collections.OrderedDict(b=1, a=2),
        collections.defaultdict(list, {"k": [1]}), collections.defaultdict(None), collections.deque([1, 2], maxlen=3),
        decimal.Decimal("1.10"), fractions.Fraction(3, 7), int, len, str.upper, {(1, 2): frozenset({3})},
    ],
)  # fmt: skip
def test_edge_values_and_the_library_value_types_cross(value: Any) -> None:
    back = channel.decode(channel.encode(value))
    assert type(back) is type(value)
    if isinstance(value, float) and math.isnan(value):
        assert math.isnan(back)
    elif isinstance(value, complex):
        assert repr(back) == repr(value)
    else:
        assert back == value or back is value
    if isinstance(value, collections.defaultdict):
        assert back.default_factory is value.default_factory
    if isinstance(value, collections.deque):
        assert back.maxlen == value.maxlen


class _Sly(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


def _generator() -> Any:
    yield 1


@pytest.mark.parametrize(
    ("value", "named"),
    [
        (_Sly(1), "_Sly"), (collections.namedtuple("P", "x")(1), "P"), (_generator(), "generator"),
        (lambda: 1, "function"), (_Sly, "type"), (open, "builtin_function_or_method"), (object(), "object"),
        (iter([1]), "list_iterator"), (map(str, [1]), "map"), (collections.defaultdict(_Sly), "defaultdict"),
        ([{"deep": [_Sly(0)]}], "_Sly"),
    ],
)  # fmt: skip
def test_what_is_not_plain_data_is_named_and_never_crosses(value: Any, named: str) -> None:
    with pytest.raises(channel.CannotCross) as raised:
        channel.encode(value)
    assert raised.value.type_name == named


def test_nesting_and_size_are_bounded() -> None:
    deep: Any = []
    for _ in range(channel.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(channel.CannotCross, match="nesting"):
        channel.encode(deep)
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(channel.CannotCross):
        channel.encode(looped)
    with pytest.raises(channel.CannotCross) as raised:
        channel.encode("x" * (channel.MAX_FRAME_BYTES + 1))
    assert raised.value.type_name == "size"


@pytest.mark.parametrize(
    "data",
    [
        b'{"__class__": "x"}', b'{"i": 5}', b'{"t": "abc"}', b'{"d": [[1]]}', b'{"s": [[1, 2]]}', b'{"b": "open"}',
        b'{"b": "exec"}', b'{"m": ["os", "system"]}', b'{"m": ["str", "__class__"]}', b'{"h": 0}', b"NaN",
        b'{"D": ["os.system", []]}', b'{"Q": [-1, []]}', b"[" * 100_000, b'{"a": 1, "b": 2}', b"\xff", b"",
        b'{"f": "nan", "x": 1}', b'{"y": "@@@"}', b"1" * 5000,
    ],
)  # fmt: skip
def test_the_decoder_builds_nothing_else(data: bytes) -> None:
    with pytest.raises(channel.Unreadable):
        channel.decode(data)


def test_a_handle_is_read_only_where_a_side_takes_handles() -> None:
    data = json.dumps(["call", None, None, [{"h": 3}], {"d": []}]).encode()
    with pytest.raises(channel.Unreadable):
        channel.decode(data)
    assert channel.decode(data, lambda number: ("object", number))[3] == [("object", 3)]


def test_frames_cross_a_pipe_and_end_cleanly() -> None:
    read, write = os.pipe()
    try:
        channel.send(write, ["returned", {"a": (1, 2.5)}, None])
        os.write(write, (10**9).to_bytes(4, "big"))  # a frame past the bound
        os.close(write)
        assert channel.receive(read) == ["returned", {"a": (1, 2.5)}, None]
        with pytest.raises(channel.Unreadable, match="more than"):
            channel.receive(read)
        assert channel.receive(read) is None  # the end
    finally:
        os.close(read)
