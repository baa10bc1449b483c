"""Task + lane -> the request body."""

from ocllm.models import Task
from ocllm.run.lanes import Lane
from ocllm.run.prompting import request_body

TASK = Task(id="t", type="mcq", question="What is 2 + 2?", options=["3", "4"], answer="B")


def lane(**kw: object) -> Lane:
    return Lane(name="L", base_url="http://127.0.0.1:1/v1", model="m", **kw)  # type: ignore[arg-type]


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


MATH = Task(id="m", type="math", question="What is 1/2 + 1/4?", answer="\\frac{3}{4}")


def test_a_math_task_is_asked_for_a_box_unless_the_lane_says_otherwise() -> None:
    default = request_body(MATH, lane())["messages"][-1]["content"]
    assert default == "What is 1/2 + 1/4?\n\nPut your final answer within \\boxed{}."
    own = request_body(MATH, lane(math_template="Q: {question}\nEnd with #### and the number."))
    assert own["messages"][-1]["content"] == "Q: What is 1/2 + 1/4?\nEnd with #### and the number."
    # The MCQ and substring templates are not a math task's.
    assert request_body(MATH, lane(prompt_template="{question}{options} X"))["messages"][-1]["content"] == default
