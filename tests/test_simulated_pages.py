"""A run the ocllm simulator answered says so on every page, table and document (issue 41, item 2).

The demo is run as `make demo` runs it, into a fresh folder, and every page it writes is opened in a real headless
browser (as tests/test_report_browser.py does): its visible text must carry the simulated banner. Then lanes against
the simulator and against a scripted server of a real kind (tests/scripted_server.py, which is no simulator) are run
side by side: the real lane's pages carry no banner, a comparison and a matrix that mix them say which lane is which,
and a manifest written before the field (no `simulated`) reads as it did."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from helpers import BACKSTOP_S
from playwright.sync_api import Browser, sync_playwright
from test_advice import command, suite
from test_report_browser import ARGS, CHROMIUM

from ocllm.sim import SimConfig, SimServer

pytestmark = pytest.mark.slow  # the demo, servers, and a real headless browser

BANNER = "SIMULATED: this run was answered by the ocllm simulator, which runs no model"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: the HTML reports are tested in Debian's chromium (`make browser`)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


def visible_text(browser: Browser, page_path: Path) -> str:
    """What a reader sees of a page: its body's rendered text (nothing hidden, no markup), and its title."""
    page = browser.new_page()
    try:
        page.goto(page_path.resolve().as_uri())
        return page.title() + "\n" + page.inner_text("body")
    finally:
        page.close()


def flat(text: str) -> str:
    return " ".join(text.replace("\\", "").split())


def ocllm(*argv: str) -> str:
    """The command line, as a user runs it (in a process of its own: the browser's driver holds this thread's event
    loop); what it printed, flattened to one line of words."""
    done = subprocess.run([sys.executable, "-m", "ocllm", *argv], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return flat(done.stdout)


@pytest.mark.timeout(600)
def test_every_page_of_make_demo_says_it_is_simulated(tmp_path: Path, browser: Browser) -> None:
    out = tmp_path / "demo"
    done = subprocess.run(
        [sys.executable, "-m", "ocllm.demo", str(out)], capture_output=True, text=True, timeout=540, check=False
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # Every page the demo wrote: each of its reports, comparisons and matrices, in both formats.
    pages = sorted(p for p in out.rglob("*") if p.suffix in (".html", ".md"))
    html_pages = [p for p in pages if p.suffix == ".html"]
    kinds = {p.name for p in html_pages}
    assert {"report.html", "comparison.html", "matrix.html"} <= kinds, kinds
    assert len(html_pages) >= 15, html_pages
    for page in html_pages:
        text = visible_text(browser, page)
        assert text.startswith("SIMULATED · "), (page, text[:200])  # the tab's title
        assert "SIMULATED: " in text and "ocllm simulator, which runs no model" in text, page
        if page.name == "report.html":
            assert BANNER in text, page
        # The settings table says it too, per lane.
        assert "yes: the ocllm simulator answered (no real model)" in text, page
    for page in (p for p in pages if p.suffix == ".md"):
        text = flat(page.read_text(encoding="utf-8"))
        assert "SIMULATED: " in text and "ocllm simulator, which runs no model" in text, page
    # The console said it of every lane it ran, and named the server.
    assert done.stdout.count(BANNER) >= len([p for p in html_pages if p.name == "report.html"])
    assert "server: unknown" not in done.stdout
    assert "server: ocllm simulator (simulated answers, no real model)" in done.stdout
    # The record: every run's manifest, the managed lanes' (the simulator started as a lane's server) too.
    manifests = sorted(out.rglob("manifest.json"))
    assert len(manifests) >= 15
    for manifest in manifests:
        assert json.loads(manifest.read_text())["simulated"] is True, manifest


def _lanes(tmp: Path, sim_url: str, port: int) -> Path:
    """A lane against the running simulator, and one whose server ocllm starts: a scripted llama.cpp."""
    text = (
        f'[defaults]\nsuite = {json.dumps(str(suite(tmp)))}\nmax_attempts = 1\nconcurrency = 1\n'
        f'[lanes.sim_baseline]\nmodel = "sim-baseline"\nbase_url = "{sim_url}"\n'
        f'[lanes.real]\nmodel = "scripted"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
        f"[lanes.real.server]\ncommand = {json.dumps(command(port, 'llama.cpp', '--jinja'))}\n"
        f"ready_timeout_s = {BACKSTOP_S:g}\n"
    )
    path = tmp / "lanes.toml"
    path.write_text(text)
    return path


def test_a_real_servers_pages_carry_no_banner_and_mixed_pages_say_which_lane_was_simulated(
    tmp_path: Path, browser: Browser, reserve_port: Callable[[], int]
) -> None:
    mixed = (
        "SIMULATED lanes mixed with real ones: sim_baseline answered by the ocllm simulator (no model: simulated "
        "figures that say nothing about any model); real answered by a real server."
    )
    runs = tmp_path / "m"
    with SimServer(SimConfig()) as sim:
        console = ocllm("matrix", str(_lanes(tmp_path, sim.base_url, reserve_port())), "--out", str(runs))
    # The console: the simulated lane is named as such, the real one by its kind, and only one banner is printed.
    assert console.count(BANNER) == 1
    assert "server: ocllm simulator (simulated answers, no real model)" in console
    assert "server: llama.cpp b7300-scripted" in console
    assert mixed in console  # above the closing table of the lanes
    sim_manifest = json.loads((runs / "sim_baseline" / "manifest.json").read_text())
    real_manifest = json.loads((runs / "real" / "manifest.json").read_text())
    assert sim_manifest["simulated"] is True and real_manifest["simulated"] is False
    assert json.loads((runs / "sim_baseline" / "metrics.json").read_text())["source"]["server"]["simulated"] is True
    assert "simulated" not in json.loads((runs / "real" / "metrics.json").read_text())["source"]["server"]

    # The real lane's report: no banner, on the page or the console; its settings table says it was not simulated.
    assert "SIMULATED" not in ocllm("report", str(runs / "real"), "-o", str(tmp_path / "real_report"))
    text = visible_text(browser, tmp_path / "real_report" / "report.html")
    assert "SIMULATED" not in text and "ocllm simulator" not in text
    assert "simulated\tno" in text  # the settings table's row
    assert "SIMULATED" not in (tmp_path / "real_report" / "report.md").read_text()
    # The simulated lane's report has it.
    assert BANNER in ocllm("report", str(runs / "sim_baseline"), "-o", str(tmp_path / "sim_report"))
    assert BANNER in visible_text(browser, tmp_path / "sim_report" / "report.html")
    # Rescoring says it on the console too, of the simulated run alone.
    assert BANNER in ocllm("rescore", str(runs / "sim_baseline"), "-o", str(tmp_path / "sim_rescored.json"))
    assert "SIMULATED" not in ocllm("rescore", str(runs / "real"), "-o", str(tmp_path / "real_rescored.json"))

    assert mixed in ocllm("compare", str(runs / "real"), str(runs / "sim_baseline"), "-o", str(tmp_path / "cmp"))
    text = visible_text(browser, tmp_path / "cmp" / "comparison.html")
    assert mixed in text and "sim_baseline: simulated (ocllm simulator)" in text
    assert mixed in flat((tmp_path / "cmp" / "comparison.md").read_text())
    assert json.loads((tmp_path / "cmp" / "comparison.json").read_text())["b"]["simulated"] is True

    assert mixed in ocllm("matrix-report", str(runs), "-o", str(tmp_path / "matrix"))
    page = browser.new_page()
    try:
        page.goto((tmp_path / "matrix" / "matrix.html").resolve().as_uri())
        assert mixed in page.inner_text("body")
        # In the leaderboard, the simulated lane's row is marked, the real one's is not.
        assert page.inner_text('[data-leaderboard] tr[data-lane="sim_baseline"]').lower().count("simulated") == 1
        assert "simulated" not in page.inner_text('[data-leaderboard] tr[data-lane="real"]').lower()
    finally:
        page.close()
    assert mixed in flat((tmp_path / "matrix" / "matrix.md").read_text())

    # A manifest written before the field: it reads as before (no banner, no settings row), simulator or not.
    del sim_manifest["simulated"]
    (runs / "sim_baseline" / "manifest.json").write_text(json.dumps(sim_manifest))
    ocllm("report", str(runs / "sim_baseline"), "-o", str(tmp_path / "old_report"))
    text = visible_text(browser, tmp_path / "old_report" / "report.html")
    assert "SIMULATED" not in text and "simulated\t" not in text
