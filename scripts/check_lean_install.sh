#!/usr/bin/env bash
# The lean install, as a user makes it: a fresh venv, `pip install .` of this checkout with no extra (from PyPI,
# through pip's own configuration), then, outside the checkout:
#   - pyarrow and matplotlib are not installed (they are the extras ocllm[parquet] and ocllm[charts]);
#   - `ocllm run` of the smoke suite against `ocllm serve-sim` (its own port, from port 0) exits 0;
#   - `ocllm rescore` of that run directory exits 0;
#   - `ocllm report` of it exits 0, each chart's place saying how to install the charts extra;
#   - `ocllm import` of a Parquet file exits 2 with the one line saying how to install the parquet extra.
# Usage: scripts/check_lean_install.sh [--locked]
#   --locked: install requirements/runtime.lock (--require-hashes) and then the project with --no-deps, as the
#             lock promises, and `pip check` that nothing is missing.
# Exit 0 when all holds; the step that failed otherwise. Takes a few minutes, most of it pip.
set -euo pipefail
cd "$(dirname "$0")/.."
checkout=$PWD
PYTHON=${PYTHON:-python3}
locked=0
[ "${1:-}" = "--locked" ] && locked=1
unset PYTHONPATH  # the installed package, never this checkout's src/

work=$(mktemp -d "${TMPDIR:-/tmp}/ocllm-lean.XXXXXX")
sim_pid=""
cleanup() {
    if [ -n "$sim_pid" ]; then
        kill "$sim_pid" 2>/dev/null || true
        wait "$sim_pid" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
began=$(date +%s)
step() { echo "check_lean_install: $*"; }
fail() { echo "check_lean_install: FAILED: $*" >&2; exit 1; }

# What a build of the package reads (pyproject.toml names README.md; the package and its data are under src/),
# copied: pip builds a local project in place, and would leave build/ and an egg-info in the checkout.
mkdir "$work/project"
cp -R "$checkout/pyproject.toml" "$checkout/README.md" "$checkout/src" "$work/project/"
find "$work/project" -name __pycache__ -prune -exec rm -rf {} +

step "fresh venv in $work"
"$PYTHON" -m venv "$work/venv"
bin=$work/venv/bin
if [ "$locked" = 1 ]; then
    step "pip install --require-hashes -r requirements/runtime.lock, then --no-deps ."
    "$bin/python" -m pip install --quiet --require-hashes -r "$checkout/requirements/runtime.lock"
    "$bin/python" -m pip install --quiet --no-deps "$work/project"
    "$bin/python" -m pip check || fail "the runtime lock misses a dependency"
else
    step "pip install . (no extra)"
    "$bin/python" -m pip install --quiet "$work/project"
fi
installed=$(date +%s)

cd "$work"  # away from the checkout: only the installed package can be imported
"$bin/python" - <<'EOF' || fail "an extra's library was installed without its extra"
import importlib.util
import sys

present = [name for name in ("pyarrow", "matplotlib") if importlib.util.find_spec(name) is not None]
sys.exit(f"installed without an extra: {', '.join(present)}" if present else 0)
EOF

step "ocllm serve-sim --port 0"
"$bin/ocllm" serve-sim --port 0 > sim.out 2>&1 &
sim_pid=$!
base_url=""
for _ in $(seq 1 300); do  # up to 60 s for a Python start on a loaded machine
    base_url=$(grep -o 'http://[0-9.]*:[0-9]*/v1' sim.out | head -n 1 || true)
    [ -n "$base_url" ] && break
    kill -0 "$sim_pid" 2>/dev/null || { cat sim.out >&2; fail "serve-sim exited"; }
    sleep 0.2
done
[ -n "$base_url" ] || fail "serve-sim did not say its address"

step "ocllm run --suite smoke against $base_url"
code=0
"$bin/ocllm" run --suite smoke --base-url "$base_url" --model sim-baseline --out run > run.out 2>&1 || code=$?
[ "$code" = 0 ] || { cat run.out >&2; fail "ocllm run exited $code"; }
[ -s run/samples.jsonl ] || fail "the run wrote no samples"

step "ocllm rescore run"
"$bin/ocllm" rescore run -o rescored.json > rescore.out 2>&1 || code=$?
[ "$code" = 0 ] || { cat rescore.out >&2; fail "ocllm rescore exited $code"; }
[ -s rescored.json ] || fail "rescore wrote nothing"

step "ocllm report run (charts say how to install them)"
"$bin/ocllm" report run -o report > report.out 2>&1 || code=$?
[ "$code" = 0 ] || { cat report.out >&2; fail "ocllm report exited $code"; }
grep -q "needs matplotlib: pip install &#39;ocllm\[charts\]&#39;" report/report.html ||
    fail "report.html does not say how to install the charts"
! grep -q "<svg" report/report.html || fail "report.html has a chart without matplotlib"

step "ocllm import of a Parquet file (one line, exit 2)"
printf 'PAR1' > data.parquet
"$bin/ocllm" import mmlu data.parquet -o suite.jsonl > import.out 2> import.err || code=$?
expected="ocllm: error: reading Parquet needs pyarrow: pip install 'ocllm[parquet]'"
[ "$code" = 2 ] && [ "$(cat import.err)" = "$expected" ] ||
    { cat import.err >&2; fail "import of Parquet exited $code, not 2 with the install line"; }

done_at=$(date +%s)
step "OK: install $((installed - began)) s, checks $((done_at - installed)) s, total $((done_at - began)) s"
