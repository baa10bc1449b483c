"""The channel between a function task's two boxes: plain data, framed, and nothing else (docs/scoring/code.md,
"Trust").

A value crosses when it is, by exact type (never a subclass), None, bool, int, float, complex, str, bytes, list,
tuple, dict, set or frozenset, nested at most `MAX_DEPTH` deep, and its encoding is at most `MAX_FRAME_BYTES`. It is
written as JSON: None, booleans, strings, lists, ints of up to 63 bits and finite floats as themselves (a float's
repr gives it back exactly), everything else as an object of one key naming its type: {"i": hex} for a larger int,
{"f": hex} for a non-finite float, {"c": [hex, hex]}, {"y": base64}, {"t": [...]}, {"d": [[key, value], ...]},
{"s": [...]}, {"z": [...]}. The decoder builds nothing else: no JSON number but an int or a float, no object but
those, no key beyond them. An object with its own `__eq__`, a generator, a function or a class cannot cross: the
encoder names its type (`CannotCross`).

A frame is 4 bytes of length (big-endian) and the encoding. A message is a list whose first item says what it is.
"""

from __future__ import annotations

import base64
import json
import math
import os
import struct
from typing import Any

MAX_DEPTH = 100
MAX_FRAME_BYTES = 64 * 1024**2
_SMALL_INT = 2**63
_HEADER = struct.Struct(">I")


class CannotCross(Exception):
    """A value of a type the channel does not carry; `type_name` names it."""

    def __init__(self, type_name: str, why: str = "") -> None:
        super().__init__(type_name)
        self.type_name = type_name
        self.why = why or f"a {type_name} is not plain data"


class Unreadable(Exception):
    """What came on the channel is not a frame of plain data."""


def plain(value: Any, depth: int = 0) -> Any:
    """`value` as JSON-ready data, or CannotCross."""
    if depth > MAX_DEPTH:
        raise CannotCross("nesting", f"nested deeper than {MAX_DEPTH}")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -_SMALL_INT < value < _SMALL_INT else {"i": hex(value)}
    if kind is float:
        return value if math.isfinite(value) else {"f": value.hex()}
    if kind is complex:
        return {"c": [value.real.hex(), value.imag.hex()]}
    if kind is bytes:
        return {"y": base64.b64encode(value).decode("ascii")}
    if kind is list:
        return [plain(item, depth + 1) for item in value]
    if kind is tuple:
        return {"t": [plain(item, depth + 1) for item in value]}
    if kind is dict:
        return {"d": [[plain(k, depth + 1), plain(v, depth + 1)] for k, v in value.items()]}
    if kind is set:
        return {"s": [plain(item, depth + 1) for item in value]}
    if kind is frozenset:
        return {"z": [plain(item, depth + 1) for item in value]}
    raise CannotCross(kind.__name__)


def encode(value: Any) -> bytes:
    data = json.dumps(plain(value), separators=(",", ":"), allow_nan=False).encode("ascii")
    if len(data) > MAX_FRAME_BYTES:
        raise CannotCross("size", f"{len(data)} bytes encoded, more than the channel's {MAX_FRAME_BYTES}")
    return data


def _tagged(pairs: list[tuple[str, Any]]) -> Any:
    if len(pairs) != 1:
        raise Unreadable("an object that is not one tagged value")
    tag, payload = pairs[0]
    if tag == "i" and type(payload) is str:
        return int(payload, 16)
    if tag == "f" and type(payload) is str:
        return float.fromhex(payload)
    if tag == "c" and type(payload) is list and len(payload) == 2 and all(type(p) is str for p in payload):
        return complex(float.fromhex(payload[0]), float.fromhex(payload[1]))
    if tag == "y" and type(payload) is str:
        return base64.b64decode(payload, validate=True)
    if type(payload) is not list:
        raise Unreadable(f"a tagged value {tag!r} without its list")
    if tag == "t":
        return tuple(payload)
    if tag == "d":
        if not all(type(pair) is list and len(pair) == 2 for pair in payload):
            raise Unreadable("a dict whose items are not pairs")
        return {key: item for key, item in payload}
    if tag == "s":
        return set(payload)
    if tag == "z":
        return frozenset(payload)
    raise Unreadable(f"an unknown tag {tag!r}")


def _no_constant(name: str) -> Any:
    raise Unreadable(f"the constant {name}")


def decode(data: bytes) -> Any:
    """The plain value `data` encodes, or Unreadable."""
    try:
        return json.loads(data.decode("ascii"), object_pairs_hook=_tagged, parse_constant=_no_constant)
    except Unreadable:
        raise
    except (ValueError, TypeError, RecursionError, MemoryError, OverflowError, UnicodeDecodeError) as exc:
        raise Unreadable(f"{type(exc).__name__}: {str(exc)[:200]}") from None


def send(fd: int, message: Any) -> None:
    data = encode(message)
    data = _HEADER.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


def receive(fd: int) -> Any:
    """The next message, or None at the end of the channel (the other side closed it)."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME_BYTES:
        raise Unreadable(f"a frame of {size} bytes, more than the channel's {MAX_FRAME_BYTES}")
    data = _read_exactly(fd, size)
    if data is None:
        raise Unreadable("the channel ended inside a frame")
    return decode(data)


def _read_exactly(fd: int, size: int) -> bytes | None:
    chunks = []
    left = size
    while left:
        chunk = os.read(fd, min(left, 1024**2))
        if not chunk:
            if left == size:
                return None
            raise Unreadable("the channel ended inside a frame")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
