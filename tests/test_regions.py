"""Rule 1: the visible region and the reasoning region."""

from conftest import mcq

from ocllm.scoring.regions import split_regions


def texts(pieces):
    return [p.text for p in pieces]


def test_think_block_removed_from_visible() -> None:
    r = split_regions("<think>FINAL: A</think>\nFINAL: C", None)
    assert texts(r.visible) == ["\nFINAL: C"]
    assert texts(r.reasoning) == ["FINAL: A"]
    assert r.reasoning[0].offset == len("<think>")


def test_closer_without_opener_makes_everything_before_it_reasoning() -> None:
    r = split_regions("the user wants FINAL: A\n</think>\n\nFINAL: B", "field")
    assert texts(r.visible) == ["\n\nFINAL: B"]
    assert texts(r.reasoning) == ["field", "the user wants FINAL: A\n"]


def test_unclosed_opener_makes_the_rest_reasoning() -> None:
    r = split_regions("Preamble <think>FINAL: A and then the cut", None)
    assert texts(r.visible) == ["Preamble "]
    assert texts(r.reasoning) == ["FINAL: A and then the cut"]


def test_several_blocks_and_case_insensitive_tags() -> None:
    r = split_regions("<THINK>a</THINK>x<think>b</think>y", None)
    assert texts(r.visible) == ["x", "y"]
    assert texts(r.reasoning) == ["a", "b"]


def test_reasoning_field_is_reasoning() -> None:
    r = split_regions(None, "FINAL: A")
    assert r.visible == [] and texts(r.reasoning) == ["FINAL: A"]


def test_think_prefilled_without_closer_is_all_reasoning() -> None:
    r = split_regions("Okay, so FINAL: A is tempting", None, think_prefilled=True)
    assert r.visible == [] and texts(r.reasoning) == ["Okay, so FINAL: A is tempting"]


def test_candidate_spans_point_into_the_raw_field() -> None:
    content = "<think>maybe FINAL: A</think>Answer below.\nFINAL: C"
    d = mcq(content, "reasoning says FINAL: B", answer="C")
    for c in d.candidates:
        raw = content if c.field == "content" else "reasoning says FINAL: B"
        assert raw[c.start : c.end] == c.text
    assert [(c.region, c.field, c.letter) for c in d.candidates] == [
        ("content", "content", "C"),
        ("reasoning", "reasoning", "B"),  # the reasoning field comes first: it was produced first
        ("reasoning", "content", "A"),
    ]
    assert d.extracted_final_answer == "C"


def test_statement_inside_think_block_never_decides() -> None:
    d = mcq("<think>The answer is FINAL: D for sure</think>", answer="D")
    assert d.correct is False
    assert d.ambiguity == "answer_only_in_reasoning"


# gpt-oss's harmony format, left in the content by a server or a tool that did not parse it.
def test_harmony_channels_in_the_content_split_at_the_final_channel() -> None:
    content = "<|channel|>analysis<|message|>Maybe FINAL: A<|end|><|start|>assistant<|channel|>final<|message|>FINAL: C"
    r = split_regions(content, None)
    assert texts(r.visible) == ["FINAL: C"]
    assert texts(r.reasoning) == ["<|channel|>analysis<|message|>Maybe FINAL: A"]
    assert content[r.visible[0].offset :] == "FINAL: C"
    assert mcq(content, answer="C").extracted_final_answer == "C"


def test_harmony_decoded_without_its_tokens_splits_at_assistantfinal() -> None:
    content = "analysisWe compare the options. FINAL: A? No.assistantfinalFINAL: C"
    r = split_regions(content, None)
    assert texts(r.visible) == ["FINAL: C"]
    assert texts(r.reasoning) == ["analysisWe compare the options. FINAL: A? No."]


def test_harmony_analysis_without_a_final_channel_is_all_reasoning() -> None:
    r = split_regions("analysisWe need to compare 12 and", None)
    assert (texts(r.visible), texts(r.reasoning)) == ([], ["analysisWe need to compare 12 and"])
    # Prose that opens with the word is no harmony: "analysis of" has no capital after it.
    r = split_regions("analysis of the data gives FINAL: B", None)
    assert texts(r.visible) == ["analysis of the data gives FINAL: B"]
