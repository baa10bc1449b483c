"""A toy task type, defined entirely in this folder (issue 31: a room is one folder and one registration).

`shout`: the task names a word; the answer must be that word in capital letters and nothing else. The room brings
its own task struct, decision struct, prompt, rule, simulated answers and report words, and registers itself when
this package is imported: in the test's process by the import, in a decision worker when it unpickles a task of the
type, and in a CLI subprocess through OCLLM_TASK_TYPES=shout (with tests/toy_room/ on PYTHONPATH). The test
folder itself is no package, so that collecting the tests does not register the room for every other test.
"""

from __future__ import annotations

from pathlib import Path

from ocllm.scoring import task_types
from ocllm.scoring.room import room_type

# Its parts are in shout/room.py, found there by convention (ocllm/scoring/room.py): this line is all it adds.
TASK_TYPE = task_types.register(
    room_type(__name__, name="shout", label="shouted word", demo_suite=str(Path(__file__).with_name("shout.jsonl")))
)
