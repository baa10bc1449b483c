"""The watch itself: wait for DIR, find its runs, read them every interval and show the figures (terminal, page,
served page), until every run found has finished (unless told to follow) or Ctrl-C."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.live import Live

from ocllm.errors import InputError
from ocllm.visible_text import visible
from ocllm.watch.figures import Snapshot, snapshot
from ocllm.watch.finding import check_folder, find_runs, is_run_folder
from ocllm.watch.page import page, write_page
from ocllm.watch.run_state import RunState, RunWatch
from ocllm.watch.serving import PageServer
from ocllm.watch.terminal import view


@dataclass(frozen=True)
class Settings:
    root: Path
    interval: float = 2.0
    once: bool = False
    follow: bool = False
    baseline: str | None = None
    stall_after: float = 120.0
    html: Path | None = None
    serve: int | None = None


class Watcher:
    """The runs under one folder, each read a little more at each `read`."""

    def __init__(
        self,
        settings: Settings,
        *,
        wall: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self._wall, self._clock = wall, clock
        self._runs: dict[Path, RunWatch] = {}

    def read(self) -> Snapshot:
        now, clock = self._wall(), self._clock()
        by_lane: dict[str, list[tuple[str | None, RunState]]] = {}
        for spot in find_runs(self.settings.root):
            run = self._runs.get(spot.path)
            if run is None:
                run = self._runs[spot.path] = RunWatch(spot.path, stall_after=self.settings.stall_after)
            state = run.refresh(now=now, clock=clock)
            by_lane.setdefault(spot.lane, []).append((_shard_label(spot.shard, state), state))
        return snapshot(by_lane, self.settings.baseline)

    def found_any(self) -> bool:
        return bool(find_runs(self.settings.root))


def _shard_label(folder_shard: int | None, state: RunState) -> str | None:
    if state.shard is not None:
        return f"{state.shard[0]}/{state.shard[1]}"
    return None if folder_shard is None else f"{folder_shard}/?"


def watch(settings: Settings, console: Console, *, sleep: Callable[[float], None] = time.sleep) -> int:
    """Run the watch to its end; the exit code (0). Ctrl-C ends it as quietly as its own end does."""
    try:
        return _watch(settings, console, sleep)
    except KeyboardInterrupt:
        return 0


def _watch(settings: Settings, console: Console, sleep: Callable[[float], None]) -> int:
    root = settings.root
    if settings.html is not None and is_run_folder(settings.html.parent):
        raise InputError(f"--html {settings.html}: inside a run folder; the watch writes nothing among a run's files")
    if not root.exists():
        console.print(visible(f"waiting for {root} to appear"))
        while not root.exists():
            sleep(settings.interval)
    check_folder(root)
    watcher = Watcher(settings)
    if settings.once:
        said = False
        while not watcher.found_any():
            if not said:
                console.print(visible(f"waiting for a run in {root}"))
                said = True
            sleep(settings.interval)
        shown = watcher.read()
        taken = _now()
        console.print(view(shown, root, taken))
        _write(settings, shown, taken, live=False)
        return 0
    with ExitStack() as stack:
        server = None
        if settings.serve is not None:
            server = stack.enter_context(PageServer(settings.serve))
            console.print(visible(f"serving the page at {server.url}"))
        live = stack.enter_context(Live(console=console, auto_refresh=False, transient=False))
        while True:
            shown = watcher.read()
            taken = _now()
            ending = shown.finished and not settings.follow
            live.update(view(shown, root, taken), refresh=True)
            text = _write(settings, shown, taken, live=not ending)
            if server is not None:
                server.show(text)
            if ending:
                break
            sleep(settings.interval)
    return 0


def _write(settings: Settings, shown: Snapshot, taken: str, *, live: bool) -> str:
    text = page(shown, settings.root, taken, settings.interval, live=live)
    if settings.html is not None:
        write_page(settings.html, text)
    return text


def _now() -> str:
    return datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")
