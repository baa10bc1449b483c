"""Task + lane -> the request body."""

import hashlib
import json
from pathlib import Path

import pytest

from ocllm.errors import InputError
from ocllm.run.lanes import Lane, lane_from_mapping, load_lanes
from ocllm.run.prompting import request_body
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.tool_call.fields import ToolCallTask
from ocllm.suites import load_suite

TASK = McqTask(id="t", question="What is 2 + 2?", options=["3", "4"], answer="B")


def lane(**kw: object) -> Lane:
    return lane_from_mapping("L", {"base_url": "http://127.0.0.1:1/v1", "model": "m", **kw}, "test")


def test_mcq_prompt_and_sampling() -> None:
    body = request_body(TASK, lane(temperature=0.6, top_p=0.95, max_tokens=100, seed=7, system_prompt="Be brief."))
    assert body["messages"][0] == {"role": "system", "content": "Be brief."}
    assert body["messages"][1]["content"].startswith("What is 2 + 2?\n\nA. 3\nB. 4\n\n")
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (0.6, 0.95, 100, 7)


def test_reasoning_switch() -> None:
    assert request_body(TASK, lane(reasoning="native"))["chat_template_kwargs"] == {"enable_thinking": True}
    assert request_body(TASK, lane())["chat_template_kwargs"] == {"enable_thinking": False}
    assert "chat_template_kwargs" not in request_body(TASK, lane(reasoning_switch="none"))


def test_extra_body_merges_and_overrides() -> None:
    extra = {"chat_template_kwargs": {"enable_thinking": True, "thinking_budget": 512}, "repetition_penalty": 1.05}
    body = request_body(TASK, lane(extra_body=extra))
    assert body["chat_template_kwargs"] == {"enable_thinking": True, "thinking_budget": 512}
    assert body["repetition_penalty"] == 1.05


def test_unset_sampling_is_not_sent() -> None:
    body = request_body(TASK, lane(temperature=None, seed=None, max_tokens=None))
    assert not {"temperature", "seed", "max_tokens", "top_p"} & set(body)


MATH = MathTask(id="m", question="What is 1/2 + 1/4?", answer="\\frac{3}{4}")


def test_a_math_task_is_asked_for_a_box_unless_the_lane_says_otherwise() -> None:
    default = request_body(MATH, lane())["messages"][-1]["content"]
    assert default == "What is 1/2 + 1/4?\n\nPut your final answer within \\boxed{}."
    own = request_body(MATH, lane(templates={"math": "Q: {question}\nEnd with #### and the number."}))
    assert own["messages"][-1]["content"] == "Q: What is 1/2 + 1/4?\nEnd with #### and the number."
    # The MCQ and substring templates are not a math task's.
    assert request_body(MATH, lane(templates={"mcq": "{question}{options} X"}))["messages"][-1]["content"] == default


# Lanes that set every setting a request is built from; the old keys in one file, the templates table in the other.
_SETTINGS = """
[lanes.plain]
base_url = "http://127.0.0.1:1/v1"
model = "m"

[lanes.custom]
base_url = "http://127.0.0.1:1/v1"
model = "m2"
system_prompt = "Be brief."
temperature = 0.6
top_p = 0.95
seed = 7
samples_per_task = 2
reasoning = "native"
tool_choice = "required"
extra_body = { repetition_penalty = 1.05, chat_template_kwargs = { thinking_budget = 64 } }
{templates}
[lanes.bare]
base_url = "http://127.0.0.1:1/v1"
model = "m3"
reasoning_switch = "none"
temperature = 0.0
seed = 0
max_tokens = 10
"""
_TEMPLATES = {
    "mcq": ("prompt_template", "Q: {question}\\nOptions:\\n{options}\\nAnswer with one of {letters}."),
    "required_substrings": ("substring_template", "Please: {question}"),
    "math": ("math_template", "{question}\\nEnd with #### and the number."),
    "instructions": ("instructions_template", "Follow these: {question}"),
    "json": ("json_template", "{question}\\nSchema: {schema}"),
    "tool_call": ("tool_template", "{question}\\nTools: {tools}"),
}
OLD_KEYS = "".join(f'{key} = "{template}"\n' for key, template in _TEMPLATES.values())
TABLE = "[lanes.custom.templates]\n" + "".join(f'{name} = "{t}"\n' for name, (_, t) in _TEMPLATES.items())
# sha256 of every request body of every shipped suite under these lanes (each sample of each task, json.dumps of
# the body, one a line), made by commit 6156b23, before prompts were messages and templates one table (issue 31):
# 432 bodies. The request bodies must stay these bytes. The shipped suites of that commit (one shipped later has no
# bodies from before to be compared with).
BODIES_BEFORE = "b1a503d22c9c3309ad1eb85b97ade4ca0669d3d4c792a9b836d7aa66cdf6c311"
SUITES_BEFORE = ("demo", "demo-formats", "demo-math", "demo-tools", "smoke")


@pytest.mark.parametrize("spelling", [OLD_KEYS, TABLE], ids=["keys of before", "templates table"])
def test_request_bodies_of_the_shipped_suites_are_the_bytes_they_were(tmp_path: Path, spelling: str) -> None:
    path = tmp_path / "lanes.toml"
    path.write_text(_SETTINGS.replace("{templates}", spelling), encoding="utf-8")
    lanes = load_lanes(path)
    assert lanes["custom"].templates["math"].startswith("{question}\nEnd with ####")  # read, whichever spelling
    lines = [
        json.dumps(request_body(task, lane, sample), ensure_ascii=False)
        for suite in SUITES_BEFORE
        for task in load_suite(suite).tasks
        for lane in lanes.values()
        for sample in range(lane.samples_per_task)
    ]
    assert len(lines) == 432
    assert hashlib.sha256(("\n".join(lines) + "\n").encode()).hexdigest() == BODIES_BEFORE


TOOL = ToolCallTask(
    id="w", question="Weather in Paris?", expected_calls=[],
    tools=[{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}],
)  # fmt: skip


def test_tool_choice_is_the_tool_rooms_and_goes_with_its_tools_only(tmp_path: Path) -> None:
    path = tmp_path / "lanes.toml"
    path.write_text('[lanes.A]\nbase_url = "http://x/v1"\nmodel = "m"\ntool_choice = "required"\n')
    required = load_lanes(path)["A"]
    assert "tool_choice" not in Lane.__struct_fields__  # no field every type carries
    body = request_body(TOOL, required)
    assert list(body)[-2:] == ["tools", "tool_choice"] and body["tool_choice"] == "required"
    assert request_body(TOOL, lane())["tool_choice"] == "auto"  # the room's default
    assert "tool_choice" not in request_body(TASK, required) and "tools" not in request_body(TASK, required)
    path.write_text('[lanes.A]\nbase_url = "http://x/v1"\nmodel = "m"\ntool_choice = "always"\n')
    with pytest.raises(InputError) as err:
        load_lanes(path)
    assert str(err.value) == (
        f"{path}: lane 'A': tool_choice must be one of 'auto', 'required', 'none' (got 'always')"
    )
