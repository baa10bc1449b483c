"""`ocllm watch`'s page in a real headless browser (Debian's chromium, driven by playwright, as the reports'): a
sharded matrix in flight renders with its lanes, shards and paired figure, quietly (no error, no request anywhere),
and the served page reloads itself. The screenshot docs/scaling.md shows is taken here: with
OCLLM_WATCH_SCREENSHOT=docs/images/watch.png the test writes it there (else into its temporary folder)."""

from __future__ import annotations

import io
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, sync_playwright
from rich.console import Console
from test_report_browser import ARGS, CHROMIUM, local
from test_watch import LANES, lay_out, runs  # noqa: F401 (runs: the fixture of the real runs)

from ocllm.cli import main
from ocllm.watch.loop import Settings, watch

pytestmark = pytest.mark.slow  # a real headless browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: the HTML pages are tested in Debian's chromium (`make browser`)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


def in_flight(real: Path, root: Path) -> None:
    """Shard 0 of each lane finished, shard 1 on its way (B's stalled ten minutes ago)."""
    for lane in LANES:
        lay_out(real / "shard-0" / lane, root / "shard-0" / lane, lane, None)
        lay_out(real / "shard-1" / lane, root / "shard-1" / lane, lane, 20 if lane == "A_base" else 12, torn=True)
    stalled = root / "shard-1" / "B_reason" / "samples.jsonl"
    old = stalled.stat().st_mtime - 600
    os.utime(stalled, (old, old))


def test_the_page_shows_the_lanes_and_the_paired_figure(
    runs: dict[str, Path], browser: Browser, tmp_path: Path  # noqa: F811 (the real runs first: they run asyncio)
) -> None:
    root, html = tmp_path / "submitted", tmp_path / "watch.html"
    in_flight(runs["root"], root)
    assert main(["watch", str(root), "--once", "--html", str(html)]) == 0
    page = browser.new_page(viewport={"width": 1500, "height": 760})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("request", lambda r: None if local(r.url) else problems.append(f"request to {r.url}"))
    page.goto(html.as_uri(), wait_until="load")
    try:
        assert page.locator("tr.lane-row").count() == 2 and page.locator("tr.shard-row").count() == 4
        for lane in LANES:
            assert page.locator(f'tr.lane-row[data-lane="{lane}"]').is_visible()
        b = page.locator('tr.lane-row[data-lane="B_reason"]')
        assert re.search(r"pts on \d+", b.locator("[data-paired]").inner_text())
        assert re.search(r"-?\d+\.\d to [+-]?\d+\.\d pts", b.locator("[data-paired-interval]").inner_text())
        assert b.locator(".ci-track.diff").count() == 1 and b.locator(".badge").count() == 1
        assert page.locator('tr.shard-row[data-status="stalled"]').count() == 1
        assert page.locator("tr.lane-row .ci-track").count() >= 2  # each lane's accuracy interval drawn
        assert page.locator('tr[data-lane="B_reason"] [data-errors]').first.inner_text() != "0"
        wrap = page.locator(".table-wrap")
        inner, outer = wrap.evaluate("e => e.scrollWidth"), wrap.evaluate("e => e.clientWidth")
        assert inner <= outer, f"the table scrolls sideways at 1500 px ({inner} > {outer})"
        shot = Path(os.environ.get("OCLLM_WATCH_SCREENSHOT") or tmp_path / "watch.png")
        page.screenshot(path=str(shot), full_page=True)
        assert shot.read_bytes().startswith(b"\x89PNG")
        assert not problems, problems
    finally:
        page.close()


def test_the_served_page_reloads_itself(runs: dict[str, Path], browser: Browser, tmp_path: Path) -> None:  # noqa: F811
    root = tmp_path / "submitted"
    in_flight(runs["root"], root)
    out = io.StringIO()
    served = threading.Event()
    done = threading.Event()

    def sleep(_seconds: float) -> None:  # the watch's wait between readings: until the test has seen the page
        served.set()
        if done.wait(60):
            raise KeyboardInterrupt  # Ctrl-C: the watch ends as quietly as its own end

    codes: list[int] = []
    settings = Settings(root, interval=1, serve=0)
    thread = threading.Thread(target=lambda: codes.append(watch(settings, Console(file=out, width=200), sleep=sleep)))
    thread.start()
    try:
        assert served.wait(60)
        url = re.search(r"serving the page at (http://127\.0\.0\.1:\d+/)", out.getvalue())
        assert url is not None, out.getvalue()
        page = browser.new_page()
        loads: list[str] = []
        page.on("load", lambda _page: loads.append("load"))
        page.goto(url.group(1), wait_until="load")
        assert page.locator("tr.lane-row").count() == 2
        assert page.locator('meta[http-equiv="refresh"]').get_attribute("content") == "1"
        page.wait_for_event("load", timeout=20_000)  # the meta refresh loads it again (from the server)
        assert len(loads) >= 2 and page.locator("tr.lane-row").count() == 2
        page.close()
    finally:
        done.set()
        thread.join(60)
    assert codes == [0] and not thread.is_alive()
