"""A sampling setting is one declaration (issue 42, item 4): run/sampling.py's table, from which the lane's value, its
range, the request body, the manifest's record and the settings tables' rows all come. A setting added here, in a
fixture, reaches all of them with no other edit; and the old flat keys read as the `sampling` table does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ocllm.analysis.run_settings import run_settings
from ocllm.cli import main
from ocllm.errors import InputError
from ocllm.run.bounds import Bound
from ocllm.run.lanes import lane_from_mapping, load_lanes, public_settings
from ocllm.run.prompting import request_body
from ocllm.run.sampling import SAMPLING, SamplingSetting
from ocllm.scoring.mcq.fields import McqTask
from ocllm.sim import SimConfig, SimServer

TASK = McqTask(id="t", question="What is 2 + 2?", options=["3", "4"], answer="B")


@pytest.fixture
def min_p() -> Iterator[None]:
    """vLLM's min_p, declared as any sampling setting is; taken out again after the test."""
    SAMPLING["min_p"] = SamplingSetting("min_p", float, None, Bound(0, 1), "min_p sent with each request.")
    try:
        yield
    finally:
        del SAMPLING["min_p"]


def _lane(**settings: object) -> dict[str, object]:
    return {"base_url": "http://127.0.0.1:1/v1", "model": "m", **settings}


def test_a_declared_setting_is_read_checked_sent_recorded_and_shown(min_p: None) -> None:
    lane = lane_from_mapping("A", _lane(min_p=0.05), "t")
    assert request_body(TASK, lane)["min_p"] == 0.05
    assert "min_p" not in request_body(TASK, lane_from_mapping("B", _lane(), "t"))  # default None: not sent
    record = public_settings(lane)
    assert record["min_p"] == 0.05
    assert list(record).index("min_p") == list(record).index("seed") + 1  # with the other sampling settings
    with pytest.raises(InputError, match=r"lane 'C': min_p must be at least 0 and at most 1 \(got 2\.0\)"):
        lane_from_mapping("C", _lane(min_p=2.0), "t")
    with pytest.raises(InputError, match=r"min_p must be a number \(got 'low'\)"):
        lane_from_mapping("C", _lane(min_p="low"), "t")


def test_a_run_records_it_in_its_manifest_and_every_settings_table_shows_it(min_p: None, tmp_path: Path) -> None:
    lanes = tmp_path / "lanes.toml"
    with SimServer(SimConfig()) as sim:
        lanes.write_text(
            f'[lanes.A]\nbase_url = "{sim.base_url}"\nmodel = "sim-baseline"\nsuite = "demo"\n'
            "[lanes.A.sampling]\nmin_p = 0.1\n",
            encoding="utf-8",
        )
        assert main(["run", "--config", str(lanes), "--lane", "A", "--out", str(tmp_path / "A"), "--limit", "2"]) == 0
    manifest = json.loads((tmp_path / "A" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["lane"]["min_p"] == 0.1 and "sampling" not in manifest["lane"]
    table = run_settings(tmp_path / "A")
    assert table["min_p"] == "0.1"
    labels = list(table)
    assert labels.index("temperature") < labels.index("min_p") < labels.index("reasoning")


def test_the_flat_keys_and_the_sampling_table_are_one_setting_merged_key_by_key(tmp_path: Path) -> None:
    path = tmp_path / "lanes.toml"
    path.write_text(
        '[defaults]\nbase_url = "http://h/v1"\nmodel = "m"\ntemperature = 0.6\nsampling = { seed = 3 }\n'
        "[lanes.flat]\nmax_tokens = 100\n"
        "[lanes.table]\nsampling = { temperature = 1, top_p = 0.9 }\n"
        "[lanes.both]\nseed = 5\nsampling = { seed = 9 }\n",
        encoding="utf-8",
    )
    lanes = load_lanes(path)
    assert lanes["flat"].sampling == {"temperature": 0.6, "top_p": None, "max_tokens": 100, "seed": 3}
    assert lanes["table"].sampling == {"temperature": 1.0, "top_p": 0.9, "max_tokens": 4096, "seed": 3}
    assert lanes["both"].sampling["seed"] == 5  # within one table, the top level's key wins
    assert isinstance(lanes["table"].sampling["temperature"], float)  # `1` is sent and recorded as 1.0
    path.write_text('[lanes.A]\nbase_url = "http://h/v1"\nmodel = "m"\nsampling = { min_p = 0.1 }\n')
    with pytest.raises(InputError, match=r"lane 'A': sampling\.min_p: not a sampling setting"):
        load_lanes(path)
    path.write_text('[lanes.A]\nbase_url = "http://h/v1"\nmodel = "m"\nmax_tokens = 1.5\n')
    with pytest.raises(InputError, match=r"max_tokens must be an integer \(got 1\.5\)"):
        load_lanes(path)
