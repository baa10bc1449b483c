"""Make docs/images/report.png, the picture of a run report the README shows.

    PYTHONPATH=src .venv/bin/python scripts/report_screenshot.py [--out docs/images/report.png]

It does what the README's quick start does: starts the simulator, runs the shipped `demo` suite with
`ocllm run` (reasoning on), writes the report with `ocllm report`, then opens report.html in headless
chromium (Debian's, at /usr/bin/chromium, driven by playwright, as tests/test_report_browser.py does) and
saves the top of the page as a PNG. Everything but the PNG goes to a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from ocllm.sim import SimConfig, SimServer
from ocllm.suites import shipped_suites

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
# The first screen of the page: the summary card, the accuracy chart and the start of the breakdowns.
VIEWPORT = {"width": 1100, "height": 900}


def ocllm(cwd: Path, *args: str) -> None:
    # Run in the temporary folder with relative paths, so that the page shows `runs/B_native_reasoning`.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    subprocess.run([sys.executable, "-m", "ocllm", *args], check=True, stdout=subprocess.DEVNULL, cwd=cwd, env=env)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "report.png")
    out = parser.parse_args().out
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is missing: apt-get install chromium (or make browser)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        lane = "B_native_reasoning"
        with SimServer(SimConfig(suites=tuple(shipped_suites().values()))) as sim:
            ocllm(Path(tmp), "run", "--suite", "demo", "--base-url", sim.base_url, "--model", "sim-reasoning",
                  "--reasoning", "native", "--lane", lane, "--out", f"runs/{lane}")  # fmt: skip
        ocllm(Path(tmp), "report", f"runs/{lane}")
        page_path = Path(tmp) / "runs" / lane / "report" / "report.html"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page(viewport=VIEWPORT, device_scale_factor=1)
            page.goto(page_path.as_uri())
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
            browser.close()
    print(f"{out} ({out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
