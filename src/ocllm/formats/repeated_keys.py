"""Which (task, sample) an input gives twice, found once every record is read, in a few bytes a record.

A set of the keys seen held a tuple, a string and a table slot per record: some 200 bytes each, the largest thing a
rescore of 100,000 lm-eval lines held (issue 45: memory flat in the input's length). Here each key is its UTF-8
bytes in one buffer, with its hash and the file it came from in arrays; the repeats are found by sorting the hashes
once, and told apart from a collision by their bytes. The repeat named is the one a reader would have met first: the
earliest record that repeats an earlier one, with the file of that earlier one.
"""

from __future__ import annotations

from array import array
from typing import NamedTuple


class Repeat(NamedTuple):
    task_id: str
    sample: int
    earlier: int  # the source (a file's number) where the key came first
    later: int  # where it came again


class RepeatedKeys:
    def __init__(self) -> None:
        self._keys = bytearray()  # every key, one after the other
        self._ends = array("Q")  # where each key ends in _keys
        self._hashes = array("q")
        self._sources = array("I")

    def add(self, task_id: str, sample: int, source: int) -> None:
        key = f"{sample}\x00{task_id}".encode("utf-8", "surrogatepass")
        self._keys += key
        self._ends.append(len(self._keys))
        self._hashes.append(hash(key))
        self._sources.append(source)

    def __len__(self) -> int:
        return len(self._ends)

    def first_repeat(self) -> Repeat | None:
        """The earliest key given again, or None when every key came once."""
        hashes = self._hashes
        order = sorted(range(len(hashes)), key=hashes.__getitem__)
        found: tuple[int, int] | None = None  # (later, earlier) of the earliest repeat so far
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and hashes[order[end]] == hashes[order[start]]:
                end += 1
            if end - start > 1:  # the same hash: the same key, or a collision (its bytes tell)
                first_of: dict[bytes, int] = {}
                for index in sorted(order[start:end]):
                    earlier = first_of.setdefault(self._key(index), index)
                    if earlier != index and (found is None or index < found[0]):
                        found = (index, earlier)
            start = end
        if found is None:
            return None
        later, earlier = found
        sample, _, task_id = self._key(later).decode("utf-8", "surrogatepass").partition("\x00")
        return Repeat(task_id, int(sample), self._sources[earlier], self._sources[later])

    def _key(self, index: int) -> bytes:
        return bytes(self._keys[self._ends[index - 1] if index else 0 : self._ends[index]])
