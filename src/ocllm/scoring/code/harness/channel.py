"""The channel between a function task's two boxes: plain data, framed, and nothing else (docs/scoring/code.md,
"Trust").

A value crosses when it is, by exact type (never a subclass), None, bool, int, float, complex, str, bytes,
bytearray, list, tuple, dict, set or frozenset; one of the standard library's value types whose equality is
Python's own (collections.Counter, OrderedDict, defaultdict with a built-in default factory or none, deque,
decimal.Decimal, fractions.Fraction), rebuilt on the receiving side with that side's own classes; or one of a fixed
list of pure built-in types and functions and their methods (`int`, `len`, `str.upper`: `BUILTIN_TYPES`,
`BUILTIN_FUNCTIONS`), by name; nested at most `MAX_DEPTH` deep, its encoding at most `MAX_FRAME_BYTES` (each box
sets it to the task's output limit: a result is bounded as printed output is). It is
written as JSON: None, booleans, strings, lists, ints of up to 63 bits and finite floats as themselves (a float's
repr gives it back exactly), everything else as an object of one key naming its type: {"i": hex} for a larger int,
{"f": hex} for a non-finite float, {"c": [hex, hex]}, {"y": base64}, {"a": base64} (bytearray), {"t": [...]},
{"d": [[key, value], ...]}, {"s": [...]}, {"z": [...]}, {"C": pairs} (Counter), {"O": pairs} (OrderedDict),
{"D": [factory, pairs]} (defaultdict), {"Q": [maxlen, items]} (deque), {"M": text} (Decimal), {"R": [n, d]}
(Fraction), {"b": name} (a built-in), {"m": [type, name]} (a built-in type's method), and {"h": number}: an object
that stays in the program's box, named by the number its box gave it (`handles`). The decoder builds nothing else:
no JSON number but an int or a float, no object but those, no key beyond them. An object with its own `__eq__`, a
generator, a function or a class of the program cannot cross: the encoder names its type (`CannotCross`).

A frame is 4 bytes of length (big-endian) and the encoding. A message is a list whose first item says what it is.
"""

from __future__ import annotations

import base64
import builtins
import collections
import json
import math
import os
import struct
import sys

# Names for annotations only: a box imports as little as it can before the program runs (typing costs a start ~3 ms).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Extra = Callable[[Any], Any]  # a side's own objects as JSON (handles), else CannotCross

MAX_DEPTH = 100
MAX_FRAME_BYTES = 16 * 1024**2  # set by each box to its output limit (`limit_frames`)
_SMALL_INT = 2**63
_HEADER = struct.Struct(">I")
# The built-ins that cross by name: pure types and functions a test may pass a function (`remove_datatype(t, int)`,
# `sorted(xs, key=len)`), never one that reaches outside the process (open, exec, __import__, input...).
BUILTIN_TYPES = (
    "bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list", "object", "range", "set",
    "slice", "str", "tuple", "type",
)  # fmt: skip
BUILTIN_FUNCTIONS = (
    "abs", "all", "any", "ascii", "bin", "chr", "divmod", "format", "hash", "hex", "len", "max", "min", "oct", "ord",
    "pow", "repr", "round", "sorted", "sum",
)  # fmt: skip
_NAMED = {name: getattr(builtins, name) for name in BUILTIN_TYPES + BUILTIN_FUNCTIONS}
_BY_OBJECT = {id(value): name for name, value in _NAMED.items()}
_METHOD_TYPES = {name: _NAMED[name] for name in ("str", "bytes", "list", "dict", "set", "tuple", "int", "float")}
_DESCRIPTOR_KINDS = (type(str.upper),)  # a built-in type's method, as `str.upper` reads it


def limit_frames(nbytes: int) -> None:
    global MAX_FRAME_BYTES
    MAX_FRAME_BYTES = int(nbytes)


class CannotCross(Exception):
    """A value of a type the channel does not carry; `type_name` names it."""

    def __init__(self, type_name: str, why: str = "") -> None:
        super().__init__(type_name)
        self.type_name = type_name
        self.why = why or f"a {type_name} is not plain data"


class Unreadable(Exception):
    """What came on the channel is not a frame of plain data."""


class _Size:
    """A lower bound of the encoding's size, counted as the value is walked: a value that cannot fit is refused
    before all of it is turned into JSON (a result of a GB is refused in the time of its first 16 MiB)."""

    def __init__(self) -> None:
        self.bytes = 0

    def add(self, nbytes: int) -> None:
        self.bytes += nbytes
        if self.bytes > MAX_FRAME_BYTES:
            raise CannotCross("size", f"more than the output limit of {MAX_FRAME_BYTES} bytes encoded")


def _pairs(value: Any, depth: int, extra: Extra | None, size: _Size) -> list[list[Any]]:
    return [[_plain(k, depth + 1, extra, size), _plain(v, depth + 1, extra, size)] for k, v in value.items()]


def plain(value: Any, depth: int = 0, extra: Extra | None = None) -> Any:
    """`value` as JSON-ready data, or CannotCross. `extra` encodes what else a side may send (its handles)."""
    return _plain(value, depth, extra, _Size())


def _plain(value: Any, depth: int, extra: Extra | None, size: _Size) -> Any:
    if depth > MAX_DEPTH:
        raise CannotCross("nesting", f"nested deeper than {MAX_DEPTH}")
    kind = type(value)
    size.add(len(value) + 2 if kind is str else 2)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if -_SMALL_INT < value < _SMALL_INT else {"i": hex(value)}
    if kind is float:
        return value if math.isfinite(value) else {"f": value.hex()}
    if kind is complex:
        return {"c": [value.real.hex(), value.imag.hex()]}
    if kind is bytes or kind is bytearray:
        size.add(len(value))
    if kind is bytes:
        return {"y": base64.b64encode(value).decode("ascii")}
    if kind is bytearray:
        return {"a": base64.b64encode(value).decode("ascii")}
    if kind is list:
        return [_plain(item, depth + 1, extra, size) for item in value]
    if kind is tuple:
        return {"t": [_plain(item, depth + 1, extra, size) for item in value]}
    if kind is dict:
        return {"d": _pairs(value, depth, extra, size)}
    if kind is set:
        return {"s": [_plain(item, depth + 1, extra, size) for item in value]}
    if kind is frozenset:
        return {"z": [_plain(item, depth + 1, extra, size) for item in value]}
    return _library_value(value, kind, depth, extra, size)


def _library_value(value: Any, kind: type, depth: int, extra: Extra | None, size: _Size) -> Any:
    if kind is collections.Counter:
        return {"C": _pairs(value, depth, extra, size)}
    if kind is collections.OrderedDict:
        return {"O": _pairs(value, depth, extra, size)}
    if kind is collections.defaultdict:
        factory = value.default_factory
        if factory is not None and _BY_OBJECT.get(id(factory)) not in BUILTIN_TYPES:
            raise CannotCross("defaultdict", "a defaultdict whose default factory is not a built-in type")
        return {"D": [None if factory is None else factory.__name__, _pairs(value, depth, extra, size)]}
    if kind is collections.deque:
        return {"Q": [value.maxlen, [_plain(item, depth + 1, extra, size) for item in value]]}
    # decimal and fractions cost a box's start a few milliseconds to import: a value of theirs can only exist where
    # its module was imported, so they are looked up, never imported, here.
    decimal, fractions = sys.modules.get("decimal"), sys.modules.get("fractions")
    if decimal is not None and kind is decimal.Decimal:
        return {"M": str(value)}
    if fractions is not None and kind is fractions.Fraction:
        return {"R": [_plain(value.numerator, 0, None, size), _plain(value.denominator, 0, None, size)]}
    name = _BY_OBJECT.get(id(value))
    if name is not None and _NAMED[name] is value:
        return {"b": name}
    if kind in _DESCRIPTOR_KINDS:
        owner = getattr(value, "__objclass__", None)
        owner_name, method_name = getattr(owner, "__name__", ""), value.__name__  # a method descriptor has a name
        if _METHOD_TYPES.get(owner_name) is owner and getattr(owner, method_name, None) is value:
            return {"m": [owner_name, method_name]}
    if extra is not None:
        return extra(value)
    raise CannotCross(kind.__name__)


def encode(value: Any, extra: Extra | None = None) -> bytes:
    data = json.dumps(plain(value, 0, extra), separators=(",", ":"), allow_nan=False).encode("ascii")
    if len(data) > MAX_FRAME_BYTES:
        raise CannotCross("size", f"{len(data)} bytes encoded, more than the output limit of {MAX_FRAME_BYTES}")
    return data


def _pair_list(payload: Any) -> list[Any]:
    if type(payload) is not list or not all(type(pair) is list and len(pair) == 2 for pair in payload):
        raise Unreadable("a mapping whose items are not pairs")
    return payload


def _tagged(pairs: list[tuple[str, Any]], handle: Callable[[int], Any] | None) -> Any:
    if len(pairs) != 1:
        raise Unreadable("an object that is not one tagged value")
    tag, payload = pairs[0]
    if tag == "h" and type(payload) is int and handle is not None:
        return handle(payload)
    if tag == "b" and type(payload) is str and payload in _NAMED:
        return _NAMED[payload]
    if tag == "m" and type(payload) is list and len(payload) == 2 and payload[0] in _METHOD_TYPES:
        method = getattr(_METHOD_TYPES[payload[0]], str(payload[1]), None)
        if type(method) not in _DESCRIPTOR_KINDS:
            raise Unreadable("a method that is not a built-in type's")
        return method
    if tag == "M" and type(payload) is str:
        import decimal

        return decimal.Decimal(payload)
    if tag == "a" and type(payload) is str:
        return bytearray(base64.b64decode(payload, validate=True))
    if tag == "R" and type(payload) is list and len(payload) == 2 and all(type(p) is int for p in payload):
        import fractions

        return fractions.Fraction(payload[0], payload[1])
    if tag == "C":
        return collections.Counter({key: item for key, item in _pair_list(payload)})
    if tag == "O":
        return collections.OrderedDict((key, item) for key, item in _pair_list(payload))
    if tag == "D" and type(payload) is list and len(payload) == 2:
        factory = payload[0]
        if factory is not None and factory not in BUILTIN_TYPES:
            raise Unreadable("a defaultdict whose factory is not a built-in type")
        made: collections.defaultdict[Any, Any] = collections.defaultdict(None if factory is None else _NAMED[factory])
        made.update((key, item) for key, item in _pair_list(payload[1]))
        return made
    if tag == "Q" and type(payload) is list and len(payload) == 2 and type(payload[1]) is list:
        maxlen = payload[0]
        if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
            raise Unreadable("a deque whose maxlen is not a count")
        return collections.deque(payload[1], maxlen)
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
        return {key: item for key, item in _pair_list(payload)}
    if tag == "s":
        return set(payload)
    if tag == "z":
        return frozenset(payload)
    raise Unreadable(f"an unknown tag {tag!r}")


def _no_constant(name: str) -> Any:
    raise Unreadable(f"the constant {name}")


def decode(data: bytes, handle: Callable[[int], Any] | None = None) -> Any:
    """The plain value `data` encodes, or Unreadable. `handle` gives the object a handle names (the program's side
    only: the tests' side takes none)."""

    def tagged(pairs: list[tuple[str, Any]]) -> Any:
        return _tagged(pairs, handle)

    try:
        return json.loads(data.decode("ascii"), object_pairs_hook=tagged, parse_constant=_no_constant)
    except Unreadable:
        raise
    except (ValueError, TypeError, RecursionError, MemoryError, OverflowError, UnicodeDecodeError) as exc:
        raise Unreadable(f"{type(exc).__name__}: {str(exc)[:200]}") from None


def send(fd: int, message: Any, extra: Extra | None = None) -> None:
    data = encode(message, extra)
    data = _HEADER.pack(len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


def receive(fd: int, handle: Callable[[int], Any] | None = None) -> Any:
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
    return decode(data, handle)


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
