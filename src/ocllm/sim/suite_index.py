"""What a prompt asks the simulator: the suite task whose question it quotes."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from ocllm.models import Task

# Questions are found by their first characters: a dict lookup at every position of the prompt costs
# O(prompt length) whatever the suite size, where testing every question would cost O(suite size).
_KEY_LEN = 32
_CACHE_SIZE = 4096


class SuiteIndex:
    """Finds the task whose question text occurs in a prompt; the longest one wins when several do."""

    def __init__(self, tasks: Iterable[Task]) -> None:
        self._by_question: dict[str, Task] = {}
        for task in tasks:
            # The first task with a given question wins, so a later duplicate cannot change answers.
            if task.question and task.question not in self._by_question:
                self._by_question[task.question] = task
        # Key -> the distinct lengths of the questions starting with it, longest first. Many questions share
        # an opening ("Which of the following ..."), and a length plus a dict lookup tests all of them at once.
        lengths: dict[str, set[int]] = {}
        self._short: list[str] = []  # questions shorter than the key: few, so tested one by one
        for question in self._by_question:
            if len(question) >= _KEY_LEN:
                lengths.setdefault(question[:_KEY_LEN], set()).add(len(question))
            else:
                self._short.append(question)
        self._by_key = {key: sorted(found, reverse=True) for key, found in lengths.items()}
        # A run sends the same prompt once per lane and repeat; remembering answers spares the scan.
        self._cache: OrderedDict[str, Task | None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._by_question)

    def find(self, text: str) -> Task | None:
        if not self._by_question:
            return None
        if text in self._cache:
            self._cache.move_to_end(text)
            return self._cache[text]
        found = self._scan(text)
        self._cache[text] = found
        if len(self._cache) > _CACHE_SIZE:
            self._cache.popitem(last=False)
        return found

    def _scan(self, text: str) -> Task | None:
        best = ""
        for question in self._short:
            if len(question) > len(best) and question in text:
                best = question
        if self._by_key:
            for start in range(len(text) - _KEY_LEN + 1):
                for length in self._by_key.get(text[start : start + _KEY_LEN], ()):
                    if length <= len(best):
                        break
                    candidate = text[start : start + length]
                    if candidate in self._by_question:
                        best = candidate
                        break
        return self._by_question[best] if best else None
