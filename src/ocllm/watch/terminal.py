"""The watch in the terminal: one table, a row per lane and under it a row per shard, redrawn in place by rich's
Live display (or printed once). Every string from a file (a lane's folder name, an error kind) is printed as text,
its control characters made visible by the console (console.py)."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ocllm.visible_text import visible
from ocllm.watch import cells
from ocllm.watch.figures import Snapshot

_STYLES = {"finished": "green", "stalled": "bold red", "interrupted": "yellow", "waiting": "dim", "running": "cyan"}


def view(snapshot: Snapshot, root: Path, taken: str) -> RenderableType:
    """The table of the snapshot, headed by what is watched and when it was read."""
    head = Text(visible(f"ocllm watch {root} · {taken}"), style="bold")
    if snapshot.baseline is not None:
        head.append(visible(f" · baseline {snapshot.baseline}"))
    if not snapshot.lanes:
        return Group(head, Text(visible(f"no run found in {root} yet"), style="dim"))
    table = Table(show_lines=False, pad_edge=False)
    for name in cells.COLUMNS:
        table.add_column(name, justify="right" if name in ("done", "rate", "ETA", "McNemar p") else "left")
    for lane in snapshot.lanes:
        for row in (lane.row, *lane.shards):
            words = cells.cells(row)
            status = Text(visible(words[2]), style=_STYLES.get(row.status, ""))
            texts = [Text(visible(word)) for word in words]
            texts[2] = status
            if row.shard is None:
                texts[0].stylize("bold")
                if row.paired is not None and row.paired.significant:
                    texts[9].stylize("bold")
            else:
                texts[1] = Text(visible(f"shard {row.shard}"), style="dim")
            table.add_row(*texts)
    parts: list[RenderableType] = [head, table]
    parts += [Text(visible(note), style="yellow") for note in snapshot.notes]
    return Group(*parts)
