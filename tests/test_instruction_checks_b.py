"""IFEval's checks of group B (issue 22): detectable_format, combination, startend and change_case. Each id on
answers written here that follow it and that do not, with the measured quantity checked; each id once through
`decide` on an instructions task (with a loose variant where one can rescue the answer); bad arguments refused
when the suite is read. The figures are counted by hand from IFEval's published semantics (docs/scoring/instructions.md,
"Group B checks" says where we differ on purpose)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import assert_instructions_refused

from ocllm.models import Sample
from ocllm.scoring import decide
from ocllm.scoring.instructions.checks import CHECKS, checked_kwargs
from ocllm.scoring.instructions.fields import InstructionsTask

IFEVAL_BULLETS = "(IFEval's pattern counts 4: it also takes lines like `---`, `-5`, `*word*`, `* * *`)"
NONE_OF = 'none of "My answer is yes.", "My answer is no.", "My answer is maybe." found'
LATIN_BAR = "needed at least 90% (our rule for English)"


def measure(instruction_id: str, text: str, kwargs: dict[str, Any]) -> tuple[bool, str]:
    check = CHECKS[instruction_id]
    followed, measured = check.run(text, checked_kwargs(check, kwargs))
    return followed, measured


CASES: list[tuple[str, dict[str, Any], str, bool, str]] = [
    # detectable_format:number_bullet_lists: exactly that many `* ` / `- ` lines.
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "* one\n* two\n* three", True,
     "bullets: 3, needed exactly 3"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "Points:\n- one\n  - two\n* three", True,
     "bullets: 3, needed exactly 3"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "* one\n* two", False,
     "bullets: 2, needed exactly 3"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "* a\n* b\n* c\n* d", False,
     "bullets: 4, needed exactly 3"),
    ("detectable_format:number_bullet_lists", {"num_bullets": 1}, "**Bold heading**\n* the only point", True,
     "bullets: 1, needed exactly 1"),
    # A markdown rule is not a bullet (IFEval counts it: we say so).
    ("detectable_format:number_bullet_lists", {"num_bullets": 3}, "Intro\n---\n* a\n* b\n* c", True,
     f"bullets: 3, needed exactly 3 {IFEVAL_BULLETS}"),
    # detectable_format:constrained_response: one of the three fixed answers, case as written.
    ("detectable_format:constrained_response", {}, "My answer is yes.", True, 'contains "My answer is yes." at 0'),
    ("detectable_format:constrained_response", {}, "I think so. My answer is maybe.", True,
     'contains "My answer is maybe." at 12'),
    ("detectable_format:constrained_response", {}, "my answer is yes.", False, NONE_OF),
    ("detectable_format:constrained_response", {}, "My answer is yes", False, NONE_OF),
    # detectable_format:number_highlighted_sections: at least that many *text* / **text** spans.
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*one* and *two*", True,
     "highlighted sections: 2, needed at least 2 (*one*, *two*)"),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "**bold** and *it*", True,
     "highlighted sections: 2, needed at least 2 (**bold**, *it*)"),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 3}, "*a* *b* *c*", True,
     "highlighted sections: 3, needed at least 3 (*a*, *b*, *c*)"),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*one* only", False,
     "highlighted sections: 1, needed at least 2 (*one*)"),
    # A blank span and a span across a line break are no highlights.
    ("detectable_format:number_highlighted_sections", {"num_highlights": 1}, "* *\n*\nline*", False,
     "highlighted sections: 0, needed at least 1"),
    # detectable_format:multiple_sections: at least that many "SPLITTER n" markers, case as given.
    ("detectable_format:multiple_sections", {"section_spliter": "SECTION", "num_sections": 2},
     "SECTION 1\nIntro\nSECTION 2\nBody", True,
     'sections found: 2 (split on "SECTION" and a number), needed at least 2'),
    ("detectable_format:multiple_sections", {"section_spliter": "SECTION", "num_sections": 3},
     "SECTION 1\nIntro\nSECTION 2\nBody", False,
     'sections found: 2 (split on "SECTION" and a number), needed at least 3'),
    ("detectable_format:multiple_sections", {"section_spliter": "SECTION", "num_sections": 2},
     "Section 1\nIntro\nSection 2\nBody", False,
     'sections found: 0 (split on "SECTION" and a number), needed at least 2'),
    ("detectable_format:multiple_sections", {"section_spliter": " PARAGRAPH ", "num_sections": 2},
     "PARAGRAPH 1 first. PARAGRAPH2 second. PARAGRAPH X is not one.", True,
     'sections found: 2 (split on "PARAGRAPH" and a number), needed at least 2'),
    # detectable_format:json_format: the whole answer parses, after one fence is taken off.
    ("detectable_format:json_format", {}, '{"a": [1, 2]}', True, "parses as JSON: an object"),
    ("detectable_format:json_format", {}, '```json\n{"a": 1}\n```', True,
     "parses as JSON (after removing the opening ```json and the closing ```): an object"),
    ("detectable_format:json_format", {}, "```\n[1, 2]\n```", True,
     "parses as JSON (after removing the opening ``` and the closing ```): an array"),
    ("detectable_format:json_format", {}, '{"a": 1', False,
     "not JSON: Expecting ',' delimiter: line 1 column 8 (char 7)"),
    ("detectable_format:json_format", {}, 'Here:\n```json\n{"a": 1}\n```', False,
     "not JSON (after removing the closing ```): Expecting value: line 1 column 1 (char 0)"),
    # detectable_format:title: <<text>> on one line.
    ("detectable_format:title", {}, "<<Poem of Joy>>\nRoses are red.", True, "title <<Poem of Joy>>"),
    ("detectable_format:title", {}, "A poem << >> untitled", False, "only empty titles: << >>"),
    ("detectable_format:title", {}, "<<Poem\nof Joy>>", False, "no <<title>> on one line found"),
    ("detectable_format:title", {}, "Title: Joy", False, "no <<title>> on one line found"),
    # combination:two_responses
    ("combination:two_responses", {}, "Cats purr.\n******\nDogs bark.", True,
     "responses: 2 (split on ******), different"),
    ("combination:two_responses", {}, "******\nCats purr.\n******\nDogs bark.\n******", True,
     "responses: 2 (split on ******), different"),
    ("combination:two_responses", {}, "Cats purr.\n******\n Cats purr. ", False,
     "responses: 2 (split on ******), but they are the same"),
    ("combination:two_responses", {}, "A\n******\nB\n******\nC", False, "responses: 3 (split on ******), needed 2"),
    ("combination:two_responses", {}, "Only one answer.", False, "responses: 1 (split on ******), needed 2"),
    ("combination:two_responses", {}, "A\n******\n\n******\nB", False,
     "response 2 of 3 between the ****** separators is empty"),
    # combination:repeat_prompt: the answer begins with the prompt, case ignored.
    ("combination:repeat_prompt", {"prompt_to_repeat": "Write a poem about the sea."},
     "Write a poem about the sea.\nThe sea is wide.", True, "begins with the prompt (27 characters, case ignored)"),
    ("combination:repeat_prompt", {"prompt_to_repeat": " Write a poem about the sea. "},
     "  write a POEM about the sea. Waves.", True, "begins with the prompt (27 characters, case ignored)"),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Write a poem about the sea."},
     "Sure! Write a poem about the sea.", False,
     "leaves the prompt at character 0: 'Sure! Write a poem a' where the prompt has 'Write a poem about t'"),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Write a poem about the sea."}, "Write a poem", False,
     "the answer (12 characters) ends inside the prompt (27)"),
    # startend:end_checker: ends with the phrase, case and surrounding quotation marks ignored, as IFEval.
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Bye now. Any other questions?\n", True,
     'ends with "Any other questions?" (case ignored)'),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Bye now. any other QUESTIONS?", True,
     'ends with "any other QUESTIONS?" (case ignored)'),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, '"Bye. Any other questions?"', True,
     'ends with "Any other questions?" (case ignored)'),
    ("startend:end_checker", {"end_phrase": "Any other questions?"}, "Any other questions? Thanks.", False,
     'the last 20 characters are "r questions? Thanks.", needed "Any other questions?"'),
    ("startend:end_checker", {"end_phrase": "Peace!"}, "Peace.", False,
     'the last 6 characters are "Peace.", needed "Peace!"'),
    # startend:quotation: ASCII double quotation marks at both ends.
    ("startend:quotation", {}, '"Hello there."', True, "wrapped in double quotation marks"),
    ("startend:quotation", {}, '  "Hello"  \n', True, "wrapped in double quotation marks"),
    ("startend:quotation", {}, 'Sure: "hi"', False, "first character 'S', last '\"': needed '\"' at both ends"),
    ("startend:quotation", {}, "\u201cHello\u201d", False,
     "first character '\u201c', last '\u201d': needed '\"' at both ends"),
    ("startend:quotation", {}, '"', False, "the answer is 1 character(s): too short to be wrapped in quotation marks"),
    # change_case:capital_word_frequency: words in all capitals; "I" is one, as in IFEval.
    ("change_case:capital_word_frequency", {"capital_relation": "at least", "capital_frequency": 3},
     "The NASA API is GREAT", True, "capital words: 3, needed at least 3 (NASA, API, GREAT)"),
    ("change_case:capital_word_frequency", {"capital_relation": "less than", "capital_frequency": 2},
     "I think NASA is cool", False, "capital words: 2, needed less than 2 (I, NASA)"),
    ("change_case:capital_word_frequency", {"capital_relation": "at least", "capital_frequency": 2},
     "WELL-KNOWN U.S. firms", True, "capital words: 2, needed at least 2 (WELL-KNOWN, U.S)"),
    # An apostrophe splits a word, as NLTK's tokens do: DON'T is two capital tokens, AI's one.
    ("change_case:capital_word_frequency", {"capital_relation": "at least", "capital_frequency": 4},
     "I DON'T like AI's tone", True, "capital words: 4, needed at least 4 (I, DON, T, AI)"),
    ("change_case:capital_word_frequency", {"capital_relation": "at least", "capital_frequency": 1},
     "Year 2024 in 3D", True, "capital words: 1, needed at least 1 (3D)"),
    ("change_case:capital_word_frequency", {"capital_relation": "less than", "capital_frequency": 10},
     "A B C D E F G H I J", False, "capital words: 10, needed less than 10 (A, B, C, D, E, ...)"),
    ("change_case:capital_word_frequency", {"capital_relation": "less than", "capital_frequency": 1},
     "no capitals at all", True, "capital words: 0, needed less than 1"),
    # change_case:english_capital
    ("change_case:english_capital", {}, "HELLO WORLD. I AM FINE!", True,
     "all cased letters are capitals; 100% of its 17 letters are A-Z (English by our rule)"),
    ("change_case:english_capital", {}, "CAF\u00c9 AU LAIT", True,
     "all cased letters are capitals; 90% of its 10 letters are A-Z (English by our rule)"),
    ("change_case:english_capital", {}, "HELLO World", False, "lowercase letters: 4, the first 'o' at 7; needed none"),
    ("change_case:english_capital", {}, "12345 !!!", False, "no cased letters: the answer is not in capitals"),
    ("change_case:english_capital", {}, "\u041f\u0420\u0418\u0412\u0415\u0422 \u041c\u0418\u0420", False,
     f"all cased letters are capitals, but 0% of its 9 letters are A-Z, {LATIN_BAR}"),
    # change_case:english_lowercase
    ("change_case:english_lowercase", {}, "hello world, i am fine.", True,
     "all cased letters are lowercase; 100% of its 17 letters are A-Z (English by our rule)"),
    ("change_case:english_lowercase", {}, "hello World", False, "capital letters: 1, the first 'W' at 6; needed none"),
    ("change_case:english_lowercase", {}, "42", False, "no cased letters: the answer is not in lowercase"),
    ("change_case:english_lowercase", {}, "\u03b3\u03b5\u03b9\u03b1 \u03c3\u03bf\u03c5 \u03ba\u03cc\u03c3\u03bc\u03b5",
     False, f"all cased letters are lowercase, but 0% of its 12 letters are A-Z, {LATIN_BAR}"),
]  # fmt: skip


@pytest.mark.parametrize(("instruction_id", "kwargs", "text", "followed", "measured"), CASES)
def test_each_check_says_whether_it_is_followed_and_what_it_measured(
    instruction_id: str, kwargs: dict[str, Any], text: str, followed: bool, measured: str
) -> None:
    assert measure(instruction_id, text, kwargs) == (followed, measured)


GROUP_B = [
    "detectable_format:number_bullet_lists", "detectable_format:constrained_response",
    "detectable_format:number_highlighted_sections", "detectable_format:multiple_sections",
    "detectable_format:json_format", "detectable_format:title", "combination:two_responses",
    "combination:repeat_prompt", "startend:end_checker", "startend:quotation",
    "change_case:capital_word_frequency", "change_case:english_capital", "change_case:english_lowercase",
]  # fmt: skip


def test_every_group_b_id_has_answers_that_follow_it_and_answers_that_do_not() -> None:
    for instruction_id in GROUP_B:
        verdicts = {followed for case_id, _, _, followed, _ in CASES if case_id == instruction_id}
        assert verdicts == {True, False}, instruction_id


def test_a_blank_argument_follows_nothing_rather_than_everything() -> None:
    # An empty string would match every answer ("".startswith, "".endswith); the check says why it fails.
    assert measure("combination:repeat_prompt", "Anything.", {"prompt_to_repeat": "  "}) == (
        False, "the prompt to repeat is blank: nothing to check it against")  # fmt: skip
    assert measure("startend:end_checker", "Anything.", {"end_phrase": ""}) == (
        False, "the end phrase is blank: nothing to check the ending against")  # fmt: skip
    assert measure("detectable_format:multiple_sections", "1 2 3", {"section_spliter": " ", "num_sections": 1}) == (
        False, "the section splitter is blank: no section can be marked")  # fmt: skip


def test_json_nested_too_deeply_is_not_json_rather_than_a_crash() -> None:
    assert measure("detectable_format:json_format", "[" * 100_000, {}) == (
        False, "not JSON: nested too deeply to parse")  # fmt: skip


# Through the scorer: one instructions task per id, strict and loose.


def decided(instruction: dict[str, Any], content: str) -> Any:
    task = InstructionsTask(id="t", question="Write.", instructions=[instruction], category="c")
    return decide(task, Sample(task_id="t", content=content))


DECIDED: list[tuple[dict[str, Any], str, bool, bool, str | None]] = [
    # (instruction, answer, strict, loose, the loose variant that passed when strict failed)
    ({"id": "detectable_format:number_bullet_lists", "kwargs": {"num_bullets": 2}}, "* a\n* b", True, True, None),
    ({"id": "detectable_format:number_bullet_lists", "kwargs": {"num_bullets": 2}},
     "Here are two:\n* a\n* b\n* Let me know if you want more.", False, True, "no_last_line"),
    ({"id": "detectable_format:constrained_response", "kwargs": {}}, "Yes, definitely.", False, False, None),
    ({"id": "detectable_format:number_highlighted_sections", "kwargs": {"num_highlights": 1}},
     "Nothing marked here.", False, False, None),
    ({"id": "detectable_format:multiple_sections", "kwargs": {"section_spliter": "Section", "num_sections": 2}},
     "Section 1\na\nSection 2\nb", True, True, None),
    ({"id": "detectable_format:json_format", "kwargs": {}}, 'Here is the JSON:\n{"a": 1}', False, True,
     "no_first_line"),
    ({"id": "detectable_format:json_format", "kwargs": {}}, '**{"a": 1}**', False, True, "as_is_no_asterisks"),
    ({"id": "detectable_format:title", "kwargs": {}}, "Sure, here it is:\n<<Joy>>\nText.", True, True, None),
    ({"id": "combination:two_responses", "kwargs": {}}, "Sure! Two different responses:\n******\nA\n******\nB", False,
     True, "no_first_line"),
    ({"id": "combination:repeat_prompt", "kwargs": {"prompt_to_repeat": "Write a poem about the sea."}},
     "Sure, here it is:\nWrite a poem about the sea.\nWaves.", False, True, "no_first_line"),
    ({"id": "startend:end_checker", "kwargs": {"end_phrase": "Any other questions?"}},
     "Done. Any other questions?\nP.S. Have fun.", False, True, "no_last_line"),
    ({"id": "startend:quotation", "kwargs": {}}, 'Sure, here it is:\n"Roses are red."', False, True,
     "no_first_line"),
    ({"id": "change_case:capital_word_frequency", "kwargs": {"capital_relation": "less than",
                                                             "capital_frequency": 2}},
     "**NOTE**\nONLY this", False, True, "no_first_line"),
    ({"id": "change_case:english_capital", "kwargs": {}}, "Sure, here it is:\nHELLO WORLD", False, True,
     "no_first_line"),
    ({"id": "change_case:english_lowercase", "kwargs": {}}, "Here you go:\nhello world", False, True,
     "no_first_line"),
]  # fmt: skip


@pytest.mark.parametrize(("instruction", "content", "strict", "loose", "variant"), DECIDED)
def test_each_id_through_the_scorer_strict_and_loose(
    instruction: dict[str, Any], content: str, strict: bool, loose: bool, variant: str | None
) -> None:
    d = decided(instruction, content)
    assert d.correct is strict and d.correct_loose is loose
    assert d.instructions_followed == [strict] and d.instructions_followed_loose == [loose]
    verdict = d.verdicts[0]
    assert verdict.id == instruction["id"]
    if strict:
        assert verdict.loose_variant == "as_is" and verdict.loose_measured is None
    elif loose:
        assert verdict.loose_variant == variant and verdict.loose_measured is not None
    else:
        assert verdict.loose_variant is None


def test_every_group_b_id_goes_through_the_scorer() -> None:
    assert {instruction["id"] for instruction, *_ in DECIDED} == set(GROUP_B)


def test_a_loose_pass_records_what_was_measured_on_the_variant() -> None:
    d = decided({"id": "startend:quotation", "kwargs": {}}, 'Sure, here it is:\n"Roses are red."')
    verdict = d.verdicts[0]
    assert verdict.measured == "first character 'S', last '\"': needed '\"' at both ends"
    assert verdict.loose_measured == "wrapped in double quotation marks"


# Bad arguments are refused when the suite is read: one line, exit 2.


@pytest.mark.parametrize(
    ("instruction", "said"),
    [
        ({"id": "detectable_format:number_bullet_lists", "kwargs": {"num_bullets": "3"}},
         "argument 'num_bullets' is '3', not int"),
        ({"id": "detectable_format:number_highlighted_sections", "kwargs": {"num_highlights": -1}},
         "argument 'num_highlights' is -1, less than 0"),
        ({"id": "change_case:capital_word_frequency", "kwargs": {"capital_relation": "at most",
                                                                 "capital_frequency": 3}},
         "argument 'capital_relation' is 'at most', not one of 'less than', 'at least'"),
        ({"id": "detectable_format:multiple_sections", "kwargs": {"section_spliter": "SECTION"}},
         "needs the argument 'num_sections'"),
        ({"id": "startend:end_checker", "kwargs": {}}, "needs the argument 'end_phrase'"),
        ({"id": "combination:repeat_prompt", "kwargs": {"prompt_to_repeat": 5}},
         "argument 'prompt_to_repeat' is 5, not str"),
        ({"id": "detectable_format:json_format", "kwargs": {"num_words": 3}}, "takes no argument 'num_words'"),
    ],
)  # fmt: skip
def test_bad_arguments_are_refused_when_the_suite_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], instruction: dict[str, Any], said: str
) -> None:
    assert_instructions_refused(tmp_path, capsys, [instruction], said)
