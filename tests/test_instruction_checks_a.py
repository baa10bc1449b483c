"""IFEval's keywords, language, length and content instructions (issue 22, group A): answers written here that
follow each instruction and answers that do not, the measured quantity checked as well as the verdict; each id
through `decide` with its loose variant where one makes sense; bad arguments refused when the suite is read.
Every count below is counted by hand in the answer beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import assert_instructions_refused

from ocllm.models import Sample
from ocllm.scoring import decide
from ocllm.scoring.instructions.checks import CHECKS, checked_kwargs
from ocllm.scoring.instructions.checks.registry import Measured
from ocllm.scoring.instructions.decision import InstructionsDecision
from ocllm.scoring.instructions.fields import InstructionsTask
from ocllm.scoring.instructions.text import count_sentences, count_words, split_sentences, words


def run(instruction_id: str, text: str, **kwargs: Any) -> Measured:
    check = CHECKS[instruction_id]
    return check.run(text, checked_kwargs(check, kwargs))


def decided(instruction_id: str, content: str, **kwargs: Any) -> InstructionsDecision:
    task = InstructionsTask(id="t", question="Write.", category="c",
                instructions=[{"id": instruction_id, "kwargs": kwargs}])  # fmt: skip
    decision = decide(task, Sample(task_id="t", content=content))
    assert isinstance(decision, InstructionsDecision)
    return decision


# --- words and sentences (text.py) ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Leaves fall softly.", ["Leaves", "fall", "softly"]),
        ("don't stop", ["don", "t", "stop"]),  # \w+, as IFEval: the apostrophe splits
        ("It costs 3.5 dollars, state-of-the-art!", ["It", "costs", "3", "5", "dollars", "state", "of", "the", "art"]),
        ("**bold** _under_ — * ***", ["bold", "_under_"]),  # the underscore is a word character
        ("Grüße aus Köln", ["Grüße", "aus", "Köln"]),
        ("", []),
    ],
)
def test_words_are_runs_of_word_characters(text: str, expected: list[str]) -> None:
    assert words(text) == expected and count_words(text) == len(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mr. Smith paid 3.5 dollars. He left.", ["Mr. Smith paid 3.5 dollars.", "He left."]),
        ("Dr. Jones, e.g. the surgeon, came. Prof. Lee too.", ["Dr. Jones, e.g. the surgeon, came.", "Prof. Lee too."]),
        ("J. R. Tolkien wrote it. So did I. Really?! Yes", ["J. R. Tolkien wrote it.", "So did I.", "Really?!", "Yes"]),
        ("Visit example.com today. Done.", ["Visit example.com today.", "Done."]),
        ('She said "Go." Then she went.', ['She said "Go."', "Then she went."]),
        ("We sold pens, etc. Then we left. Pens etc. are fine.",
         ["We sold pens, etc.", "Then we left.", "Pens etc. are fine."]),
        ("Wait... Then it came. And then... it went.", ["Wait...", "Then it came.", "And then... it went."]),
        ("Steps:\n1. Mix the flour.\n2. Bake it.", ["Steps:\n1. Mix the flour.", "2. Bake it."]),
        ("A heading\nno stop here\nThe end.", ["A heading\nno stop here\nThe end."]),  # a line break ends nothing
        ("**Bold end.** Next one.", ["**Bold end.**", "Next one."]),
        ("One. *** Two.", ["One.", "*** Two."]),
        ("no punctuation at all", ["no punctuation at all"]),
        ("", []),
        ("***", []),
    ],
)
def test_sentences_end_where_the_documented_rules_say(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected and count_sentences(text) == len(expected)


# --- keywords:existence -------------------------------------------------------------------------------------


def test_existence_finds_every_keyword_ignoring_case_and_says_where() -> None:
    m = run("keywords:existence", "An Intern grew. The river ran.", keywords=["intern", "river"])
    assert m == Measured(True, 'found: "intern" at 3, "river" at 20')


def test_existence_finds_a_keyword_inside_a_longer_word_as_ifeval_does() -> None:
    assert run("keywords:existence", "Her internship ended.", keywords=["intern"]).followed is True


def test_existence_names_the_missing_keywords() -> None:
    m = run("keywords:existence", "A river ran.", keywords=["river", "gao", "hearts"])
    assert m == Measured(False, 'keyword(s) not found: "gao", "hearts"; found: "river" at 2')


def test_existence_reads_a_keyword_as_text_not_a_pattern() -> None:
    # IFEval's re.search("c++", ...) is a regex error; "3.5" as a pattern would match "345".
    assert run("keywords:existence", "I like c++ a lot.", keywords=["c++"]).followed is True
    assert run("keywords:existence", "Version 345.", keywords=["3.5"]).followed is False


# --- keywords:frequency -------------------------------------------------------------------------------------


def test_frequency_at_least_exactly_at_the_boundary() -> None:
    text = "War, war and WAR again."
    assert run("keywords:frequency", text, keyword="war", frequency=3, relation="at least") == Measured(
        True, 'keyword "war": 3 times, needed at least 3')
    assert run("keywords:frequency", text, keyword="war", frequency=4, relation="at least") == Measured(
        False, 'keyword "war": 3 times, needed at least 4')  # fmt: skip


def test_frequency_less_than_exactly_at_the_boundary() -> None:
    text = "The cat saw the other cat."
    assert run("keywords:frequency", text, keyword="cat", frequency=2, relation="less than") == Measured(
        False, 'keyword "cat": 2 times, needed less than 2')
    assert run("keywords:frequency", text, keyword="cat", frequency=3, relation="less than").followed is True


def test_frequency_counts_inside_longer_words_as_ifeval_does() -> None:
    # "the" in "Then" and "other": IFEval's re.findall counts substrings.
    m = run("keywords:frequency", "Then the other one.", keyword="the", frequency=2, relation="less than")
    assert m == Measured(False, 'keyword "the": 3 times, needed less than 2')


def test_frequency_of_zero_occurrences() -> None:
    m = run("keywords:frequency", "Nothing here.", keyword="photography", frequency=1, relation="less than")
    assert m == Measured(True, 'keyword "photography": 0 times, needed less than 1')


# --- keywords:forbidden_words -------------------------------------------------------------------------------


def test_forbidden_word_found_as_a_whole_word_ignoring_case_with_its_position() -> None:
    m = run("keywords:forbidden_words", "It was Very good.", forbidden_words=["very"])
    assert m == Measured(False, 'forbidden word "very" at 7')


def test_forbidden_word_inside_a_longer_word_is_not_used() -> None:
    m = run("keywords:forbidden_words", "Everyone ran; the runner won.", forbidden_words=["very", "run"])
    assert m == Measured(True, "no forbidden word")


def test_every_forbidden_word_used_is_named_in_order_of_position() -> None:
    m = run("keywords:forbidden_words", "No way, yes way.", forbidden_words=["yes", "no"])
    assert m == Measured(False, 'forbidden word "no" at 0; forbidden word "yes" at 8')


# --- keywords:letter_frequency ------------------------------------------------------------------------------


def test_letter_frequency_ignores_case_at_the_boundary() -> None:
    text = "Lolly Lilly"  # l: L, l, l, L, l, l = 6
    assert run("keywords:letter_frequency", text, letter="l", let_frequency=6, let_relation="at least") == Measured(
        True, 'letter "l": 6 times, needed at least 6')
    assert run("keywords:letter_frequency", text, letter="L", let_frequency=6, let_relation="less than") == Measured(
        False, 'letter "l": 6 times, needed less than 6')  # fmt: skip


def test_letter_frequency_counts_any_character_ifeval_asks_for() -> None:
    m = run("keywords:letter_frequency", "Wow! Great! Yes!", letter="!", let_frequency=4, let_relation="at least")
    assert m == Measured(False, 'letter "!": 3 times, needed at least 4')


def test_no_letter_at_all_follows_less_than_one() -> None:
    m = run("keywords:letter_frequency", "A song sung long", letter="e", let_frequency=1, let_relation="less than")
    assert m == Measured(True, 'letter "e": 0 times, needed less than 1')


# --- language:response_language -----------------------------------------------------------------------------

GERMAN = "Die Katze schläft im warmen Garten, und der Hund wartet geduldig vor der Tür auf seinen Freund."
FRENCH = "Le chat dort dans le jardin pendant que le chien attend patiemment son ami devant la porte."


def test_a_german_answer_is_detected_as_german_with_its_probability() -> None:
    m = run("language:response_language", GERMAN, language="de")
    assert m.followed is True and m.measured.startswith("language: de, probability ")
    assert float(m.measured.removeprefix("language: de, probability ")) > 0.9


def test_an_answer_in_another_language_says_which_and_what_was_needed() -> None:
    m = run("language:response_language", FRENCH, language="de")
    assert m.followed is False and m.measured.startswith("language: fr, probability ")
    assert m.measured.endswith(", needed de")


def test_the_detection_is_the_same_every_time() -> None:
    # Seeded: langdetect samples n-grams at random, so an unseeded detector may vary between calls.
    short = "Hallo Welt, wie geht"
    assert len({run("language:response_language", short, language="de") for _ in range(5)}) == 1


def test_a_short_answer_is_flagged_as_unreliable() -> None:
    m = run("language:response_language", "Hallo Welt", language="de")  # 9 letters
    assert m.measured.endswith("(short text, 9 letters: detection unreliable)")
    assert "unreliable" not in run("language:response_language", GERMAN, language="de").measured


def test_chinese_matches_zh_which_langdetect_spells_zh_cn() -> None:
    m = run("language:response_language", "今天天气很好，我们一起去公园散步吧，然后去吃午饭。", language="zh")
    assert m.followed is True and m.measured.startswith("language: zh-cn, probability ")


def test_an_answer_with_no_letters_counts_as_followed_as_in_ifeval_and_says_so() -> None:
    m = run("language:response_language", "12345 678 !!!", language="de")
    assert m == Measured(True, "no language detectable (no letters): counted as followed, as IFEval does")


def test_the_language_list_is_langdetect_s_profiles_and_zh() -> None:
    import langdetect

    from ocllm.scoring.instructions.checks.language import LANGUAGES

    profiles = sorted(p.name for p in (Path(langdetect.__file__).parent / "profiles").iterdir())
    assert sorted(LANGUAGES) == sorted([*profiles, "zh"])


# --- length_constraints:number_sentences --------------------------------------------------------------------


def test_sentences_at_least_at_the_boundary() -> None:
    text = "Mr. Lee came at 3.5 past. He sat. Did he eat? Yes!"  # 4: "Mr." and "3.5" end nothing
    assert run("length_constraints:number_sentences", text, num_sentences=4, relation="at least") == Measured(
        True, "sentences: 4, needed at least 4")
    assert run("length_constraints:number_sentences", text, num_sentences=5, relation="at least").followed is False


def test_sentences_less_than_at_the_boundary() -> None:
    text = "One. Two. Three."
    assert run("length_constraints:number_sentences", text, num_sentences=3, relation="less than") == Measured(
        False, "sentences: 3, needed less than 3")
    assert run("length_constraints:number_sentences", text, num_sentences=4, relation="less than").followed is True


# --- length_constraints:number_words ------------------------------------------------------------------------


def test_words_at_least_at_the_boundary() -> None:
    text = "It's a state-of-the-art tool."  # It, s, a, state, of, the, art, tool = 8
    assert run("length_constraints:number_words", text, num_words=8, relation="at least") == Measured(
        True, "words: 8, needed at least 8")
    assert run("length_constraints:number_words", text, num_words=9, relation="at least") == Measured(
        False, "words: 8, needed at least 9")  # fmt: skip


def test_words_less_than_at_the_boundary() -> None:
    text = "**One** two *three* - four."
    assert run("length_constraints:number_words", text, num_words=4, relation="less than") == Measured(
        False, "words: 4, needed less than 4")
    assert run("length_constraints:number_words", text, num_words=5, relation="less than").followed is True


# --- length_constraints:number_paragraphs -------------------------------------------------------------------


def test_paragraphs_split_on_the_divider() -> None:
    text = "First part.\n***\nSecond part.\n***\nThird part."
    assert run("length_constraints:number_paragraphs", text, num_paragraphs=3) == Measured(
        True, "paragraphs found: 3 (split on ***), needed 3")
    assert run("length_constraints:number_paragraphs", text, num_paragraphs=2) == Measured(
        False, "paragraphs found: 3 (split on ***), needed 2")  # fmt: skip


def test_a_divider_opening_or_closing_the_answer_adds_no_paragraph() -> None:
    text = "***\nFirst part.\n***\nSecond part.\n***"
    assert run("length_constraints:number_paragraphs", text, num_paragraphs=2).measured == (
        "paragraphs found: 2 (split on ***), needed 2")


def test_blank_lines_are_not_the_divider() -> None:
    text = "First part.\n\nSecond part.\n\nThird part."
    assert run("length_constraints:number_paragraphs", text, num_paragraphs=3) == Measured(
        False, "paragraphs found: 1 (split on ***), needed 3")


def test_two_dividers_with_nothing_between_break_the_instruction() -> None:
    # "******" is two *** back to back, as IFEval splits it.
    m = run("length_constraints:number_paragraphs", "First.\n******\nSecond.", num_paragraphs=2)
    assert m == Measured(False, "paragraph 2 (split on ***) is empty: two dividers with nothing between")


# --- length_constraints:nth_paragraph_first_word ------------------------------------------------------------

FOUR = "Cats purr.\n\nPresident Paws spoke.\n\nDogs bark.\n\nThe end."


def test_nth_paragraph_starts_with_the_word_ignoring_case() -> None:
    m = run("length_constraints:nth_paragraph_first_word", FOUR, num_paragraphs=4, nth_paragraph=2,
            first_word="president")  # fmt: skip
    assert m == Measured(True, 'paragraphs found: 4 (split on blank lines), needed 4; paragraph 2 starts with '
                               '"president", needed "president"')  # fmt: skip


def test_nth_paragraph_with_another_first_word() -> None:
    m = run("length_constraints:nth_paragraph_first_word", FOUR, num_paragraphs=4, nth_paragraph=3,
            first_word="cats")  # fmt: skip
    assert m.followed is False and m.measured.endswith('paragraph 3 starts with "dogs", needed "cats"')


def test_the_right_first_word_with_the_wrong_number_of_paragraphs() -> None:
    m = run("length_constraints:nth_paragraph_first_word", FOUR, num_paragraphs=3, nth_paragraph=1,
            first_word="cats")  # fmt: skip
    assert m.followed is False and m.measured.startswith("paragraphs found: 4 (split on blank lines), needed 3;")


def test_quotes_and_punctuation_around_the_first_word_are_not_part_of_it() -> None:
    text = '"Summary: it works.\n\n\'Weekend, at last.'
    first = run("length_constraints:nth_paragraph_first_word", text, num_paragraphs=2, nth_paragraph=1,
                first_word="Summary")  # fmt: skip
    second = run("length_constraints:nth_paragraph_first_word", text, num_paragraphs=2, nth_paragraph=2,
                 first_word="weekend")  # fmt: skip
    assert first.followed is True and second.followed is True


def test_a_missing_nth_paragraph_is_said() -> None:
    m = run("length_constraints:nth_paragraph_first_word", "Only one.", num_paragraphs=3, nth_paragraph=3,
            first_word="only")  # fmt: skip
    assert m == Measured(False, "paragraphs found: 1 (split on blank lines), needed 3; there is no paragraph 3")


def test_extra_blank_lines_do_not_shift_the_nth_paragraph() -> None:
    # IFEval indexes the empty piece between "\n\n\n\n" and fails here; a gap is not a paragraph
    # (docs/scoring/instructions.md).
    m = run("length_constraints:nth_paragraph_first_word", "Cats purr.\n\n\n\nDogs bark.", num_paragraphs=2,
            nth_paragraph=2, first_word="dogs")  # fmt: skip
    assert m.followed is True


# --- detectable_content:number_placeholders -----------------------------------------------------------------


def test_placeholders_at_least_at_the_boundary_named_in_the_evidence() -> None:
    text = "Dear [name], meet me at [address] on [date] at [time]."
    assert run("detectable_content:number_placeholders", text, num_placeholders=4) == Measured(
        True, "placeholders: 4 ([name], [address], [date], ...), needed at least 4")
    assert run("detectable_content:number_placeholders", text, num_placeholders=5).followed is False


def test_no_placeholder_and_brackets_across_lines() -> None:
    assert run("detectable_content:number_placeholders", "Dear friend,\nsee you.", num_placeholders=1) == Measured(
        False, "placeholders: 0, needed at least 1")
    # A bracket closed on the next line is no placeholder (IFEval's "." stops at a line break); "[]" is one.
    assert run("detectable_content:number_placeholders", "[open\nclose] and []", num_placeholders=1).measured == (
        "placeholders: 1 ([]), needed at least 1")


# --- detectable_content:postscript --------------------------------------------------------------------------


def test_a_postscript_opening_a_line_ignoring_case() -> None:
    text = "Thanks.\np.s. Bring snacks."
    assert run("detectable_content:postscript", text, postscript_marker="P.S.") == Measured(
        True, 'postscript marker "P.S." at 8 (opening a line)')


def test_a_pps_with_spaces_between_its_letters() -> None:
    text = "Thanks.\nP. P. S. Bring snacks."
    assert run("detectable_content:postscript", text, postscript_marker="P.P.S").measured == (
        'postscript marker "P.P.S" at 8 (opening a line)')


def test_a_marker_inside_a_line_counts_as_in_ifeval_and_is_said() -> None:
    assert run("detectable_content:postscript", "Done, P.S. see below", postscript_marker="P.S.").measured == (
        'postscript marker "P.S." at 6 (inside a line)')


def test_no_postscript_and_a_ps_is_not_a_pps() -> None:
    assert run("detectable_content:postscript", "Thanks.\nPS: snacks.", postscript_marker="P.S.") == Measured(
        False, 'no postscript marker "P.S."')
    assert run("detectable_content:postscript", "Thanks.\nP.S. snacks.", postscript_marker="P.P.S").followed is False


def test_another_marker_is_its_literal_text() -> None:
    assert run("detectable_content:postscript", "Note.\nN.B. later", postscript_marker="N.B.").followed is True
    assert run("detectable_content:postscript", "Note.\nNxBx later", postscript_marker="N.B.").followed is False


# --- each id through decide, with its loose variant ---------------------------------------------------------


def test_existence_through_decide() -> None:
    d = decided("keywords:existence", "Rivers and land.", keywords=["river", "land"])
    assert d.correct is True and d.verdicts[0].measured == 'found: "river" at 0, "land" at 11'


def test_frequency_less_than_fails_strict_and_passes_without_the_chatty_first_line() -> None:
    d = decided("keywords:frequency", "Sure, here is the poem:\nA poem about the sea.", keyword="the", frequency=2,
                relation="less than")  # fmt: skip
    assert d.correct is False and d.correct_loose is True
    assert d.verdicts[0].measured == 'keyword "the": 2 times, needed less than 2'
    assert d.verdicts[0].loose_variant == "no_first_line"
    assert d.verdicts[0].loose_measured == 'keyword "the": 1 times, needed less than 2'


def test_forbidden_word_in_a_closing_line_passes_loose_only() -> None:
    d = decided("keywords:forbidden_words", "Calm seas.\nHope this helps, very much!", forbidden_words=["very"])
    assert d.correct is False and d.verdicts[0].measured == 'forbidden word "very" at 28'
    assert d.correct_loose is True and d.verdicts[0].loose_variant == "no_last_line"


def test_letter_frequency_through_decide() -> None:
    d = decided("keywords:letter_frequency", "Sure!\nA song sung long", letter="e", let_frequency=1,
                let_relation="less than")  # fmt: skip
    assert d.correct is False and d.verdicts[0].measured == 'letter "e": 1 times, needed less than 1'
    assert d.correct_loose is True and d.verdicts[0].loose_measured == 'letter "e": 0 times, needed less than 1'


def test_language_through_decide() -> None:
    d = decided("language:response_language", GERMAN, language="de")
    assert d.correct is True and d.verdicts[0].measured.startswith("language: de, probability ")
    d = decided("language:response_language", FRENCH, language="de")
    assert d.correct is False and d.correct_loose is False


def test_number_sentences_fails_strict_and_passes_without_the_first_line() -> None:
    d = decided("length_constraints:number_sentences", "Sure. Here it is.\nLeaves fall.", num_sentences=2,
                relation="less than")  # fmt: skip
    assert d.correct is False and d.verdicts[0].measured == "sentences: 3, needed less than 2"
    assert d.correct_loose is True and d.verdicts[0].loose_measured == "sentences: 1, needed less than 2"


def test_number_words_fails_strict_and_passes_without_the_first_line() -> None:
    d = decided("length_constraints:number_words", "Sure, here it is:\nLeaves fall softly tonight.", num_words=5,
                relation="less than")  # fmt: skip
    assert d.correct is False and d.verdicts[0].measured == "words: 8, needed less than 5"
    assert d.verdicts[0].loose_variant == "no_first_line"
    assert d.verdicts[0].loose_measured == "words: 4, needed less than 5"


def test_number_paragraphs_fails_strict_and_passes_without_the_closing_line() -> None:
    text = "One.\nMore of one.\n***\nTwo.\n***\nHope this helps!"
    d = decided("length_constraints:number_paragraphs", text, num_paragraphs=2)
    assert d.correct is False and d.verdicts[0].measured == "paragraphs found: 3 (split on ***), needed 2"
    assert d.correct_loose is True and d.verdicts[0].loose_variant == "no_last_line"


def test_nth_paragraph_first_word_passes_loose_without_asterisks_or_a_preamble() -> None:
    bold = decided("length_constraints:nth_paragraph_first_word", "**Summary** first.\n\nThen more.",
                   num_paragraphs=2, nth_paragraph=1, first_word="summary")  # fmt: skip
    assert bold.correct is False and bold.verdicts[0].measured.endswith('starts with "**summary**", needed "summary"')
    assert bold.correct_loose is True and bold.verdicts[0].loose_variant == "as_is_no_asterisks"
    preamble = decided("length_constraints:nth_paragraph_first_word", "Sure!\n\nCats purr.\n\nDogs bark.",
                       num_paragraphs=2, nth_paragraph=1, first_word="cats")  # fmt: skip
    assert preamble.correct is False and preamble.correct_loose is True
    assert preamble.verdicts[0].loose_variant == "no_first_line"


def test_number_placeholders_through_decide() -> None:
    d = decided("detectable_content:number_placeholders", "Dear [name],\nsee you at [place].", num_placeholders=2)
    assert d.correct is True and d.verdicts[0].measured == "placeholders: 2 ([name], [place]), needed at least 2"


def test_postscript_through_decide() -> None:
    d = decided("detectable_content:postscript", "Thanks.\nP.P.S. Snacks.", postscript_marker="P.P.S")
    assert d.correct is True and d.verdicts[0].measured == 'postscript marker "P.P.S" at 8 (opening a line)'
    d = decided("detectable_content:postscript", "Thanks.\nPS Snacks.", postscript_marker="P.P.S")
    assert d.correct is False and d.correct_loose is False


# --- bad arguments, refused when the suite is read ----------------------------------------------------------


@pytest.mark.parametrize(
    ("instruction", "said"),
    [
        ({"id": "length_constraints:number_words", "kwargs": {"num_words": "300", "relation": "at least"}},
         "argument 'num_words' is '300', not int"),
        ({"id": "length_constraints:number_words", "kwargs": {"num_words": 300, "relation": "at most"}},
         "argument 'relation' is 'at most', not one of 'less than', 'at least'"),
        ({"id": "length_constraints:number_sentences", "kwargs": {"num_sentences": 3}},
         "needs the argument 'relation'"),
        ({"id": "keywords:existence", "kwargs": {"keywords": []}}, "argument 'keywords' is [], not a non-empty list"),
        ({"id": "keywords:forbidden_words", "kwargs": {"forbidden_words": ["ok", 3]}},
         "argument 'forbidden_words' is ['ok', 3], not a non-empty list of non-empty texts"),
        ({"id": "keywords:frequency", "kwargs": {"keyword": " ", "frequency": 2, "relation": "at least"}},
         "argument 'keyword' is empty"),
        ({"id": "keywords:letter_frequency",
          "kwargs": {"letter": "ab", "let_frequency": 2, "let_relation": "at least"}},
         "argument 'letter' is 'ab', not one character"),
        ({"id": "language:response_language", "kwargs": {"language": "xx"}}, "argument 'language' is 'xx', not one of"),
        ({"id": "length_constraints:nth_paragraph_first_word",
          "kwargs": {"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "cats"}},
         "nth_paragraph 3 is past num_paragraphs 2"),
        ({"id": "length_constraints:number_paragraphs", "kwargs": {"num_paragraphs": 0}},
         "argument 'num_paragraphs' is 0, less than 1"),
        ({"id": "detectable_content:postscript", "kwargs": {"postscript_marker": ""}},
         "argument 'postscript_marker' is empty"),
        ({"id": "detectable_content:number_placeholders", "kwargs": {}}, "needs the argument 'num_placeholders'"),
    ],
)
def test_bad_arguments_are_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], instruction: dict[str, Any], said: str
) -> None:
    assert_instructions_refused(tmp_path, capsys, [instruction], said)
