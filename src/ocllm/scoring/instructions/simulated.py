"""The text of a simulated answer to an instructions task (IFEval's instructions): one that follows every
instruction, or one that breaks one of them, as a model does.

It is built in layers, each instruction adding what it asks: the body (words, sentences, paragraphs, keywords,
letters), then marks in it (placeholders, highlights, bullets, sections, a title, a postscript, an ending), then
the case, then what wraps the whole (JSON, quotation marks, two responses, the prompt repeated). Instructions that
contradict each other (a JSON answer that must end with a phrase) cannot all be met: the answer then follows what
the last layer allows, as a model would. Every random choice comes from the `random.Random` handed in.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ocllm.scoring.instructions.fields import InstructionsTask
from ocllm.scoring.simulated import SimulatedAnswer, SimulatedRequest

# Words with no comma, no capital and none of the usual forbidden words; a sentence is drawn from them.
_WORDS = (
    "river", "stone", "light", "garden", "window", "morning", "quiet", "slow", "open", "road", "field", "paper",
    "music", "small", "bright", "green", "warm", "water", "simple", "story", "yellow", "tree", "city", "night",
    "forest", "cloud", "little", "moment", "path", "table", "letter", "bridge", "evening",
)
# A paragraph in each language the simulator writes (langdetect reads each as its language).
_LANGUAGES = {
    "en": "The morning light falls on the quiet garden and the river runs slowly past the old stone bridge.",
    "de": "Das Licht des Morgens fällt auf den stillen Garten und der Fluss fließt langsam an der alten Brücke vorbei.",
    "fr": "La lumière du matin tombe sur le jardin tranquille et la rivière coule lentement sous le vieux pont.",
    "es": "La luz de la mañana cae sobre el jardín tranquilo y el río corre despacio bajo el viejo puente.",
    "it": "La luce del mattino cade sul giardino tranquillo e il fiume scorre lento sotto il vecchio ponte.",
    "pt": "A luz da manhã cai sobre o jardim tranquilo e o rio corre devagar sob a velha ponte de pedra.",
    "nl": "Het licht van de ochtend valt op de stille tuin en de rivier stroomt langzaam onder de oude brug.",
    "ru": "Утренний свет падает на тихий сад и река медленно течёт под старым каменным мостом.",
    "hi": "सुबह की रोशनी शांत बगीचे पर पड़ती है और नदी पुराने पत्थर के पुल के नीचे धीरे बहती है।",
    "ja": "朝の光が静かな庭に差し込み、川は古い石の橋の下をゆっくりと流れています。",
    "zh-cn": "早晨的阳光洒在安静的花园里，河水在古老的石桥下慢慢地流淌。",
    "ko": "아침 햇살이 조용한 정원에 비치고 강물은 오래된 돌다리 아래로 천천히 흐릅니다.",
    "ar": "يسقط ضوء الصباح على الحديقة الهادئة ويجري النهر ببطء تحت الجسر الحجري القديم.",
    "fa": "نور صبح بر باغ آرام می‌تابد و رودخانه آهسته از زیر پل سنگی قدیمی می‌گذرد.",
    "fi": "Aamun valo lankeaa hiljaiseen puutarhaan ja joki virtaa hitaasti vanhan kivisillan alta.",
    "sw": "Mwanga wa asubuhi unaanguka juu ya bustani tulivu na mto unatiririka polepole chini ya daraja la zamani.",
}
_FIXED_ANSWERS = ("My answer is yes.", "My answer is no.", "My answer is maybe.")


def simulated_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    """The room's hook (`TaskType.simulated_answer`): an answer to an instructions task; no answer to a prompt it
    does not know."""
    if not isinstance(request.task, InstructionsTask):
        return None  # a prompt it does not know (no task), or another room's task, which its own room answers
    content, thinking = instructions_answer(
        request.rng, request.task, correct=request.correct, reasoning=request.reasoning
    )
    return SimulatedAnswer(content, thinking)


def instructions_answer(
    rng: random.Random, task: InstructionsTask, *, correct: bool, reasoning: bool
) -> tuple[str, str | None]:
    """The content and reasoning (None in non-reasoning mode) of an answer to `task`: following every instruction
    when `correct`, else breaking one drawn at random."""
    instructions = [i for i in task.instructions or [] if isinstance(i, dict)]
    broken = rng.randrange(len(instructions)) if instructions and not correct else None
    plan = {i["id"]: (i.get("kwargs") or {}, n == broken) for n, i in enumerate(instructions)}
    content = _compose(rng, task, plan)
    thinking = None
    if reasoning:
        # The reasoning talks about the instructions, commas, capitals and all: it is never checked.
        thinking = (
            f"The prompt asks for {len(instructions)} thing(s), and I must keep to each: "
            + ", ".join(i["id"].split(":")[-1].replace("_", " ") for i in instructions)
            + ". Let me draft it, then check every one."
        )
    return content, thinking


def _sentence(rng: random.Random, words: int = 8, avoid: str = "") -> str:
    pool = [w for w in _WORDS if not (avoid and avoid in w)] or ["hmm"]
    chosen = [rng.choice(pool) for _ in range(max(1, words))]
    return " ".join(chosen).capitalize() + "."


def _compose(rng: random.Random, task: InstructionsTask, plan: dict[str, tuple[dict[str, Any], bool]]) -> str:
    def wants(kind: str) -> tuple[dict[str, Any], bool] | None:
        return plan.get(kind)

    avoid_letter = ""
    if counted := wants("keywords:letter_frequency"):
        avoid_letter = str(counted[0].get("letter", "")).lower()  # counted exactly: added below, never in the body

    # -- the body: paragraphs of sentences, sized by the length instructions ------------------------------------
    sentences, words_each = 4, 8
    if (spec := wants("length_constraints:number_sentences")) is not None:
        n, relation = int(spec[0].get("num_sentences", 3)), spec[0].get("relation", "at least")
        meets = n + 1 if relation == "at least" else max(1, n - 1)
        breaks = max(1, n - 1) if relation == "at least" else n + 2
        sentences = breaks if spec[1] else meets
    if (spec := wants("length_constraints:number_words")) is not None:
        n, relation = int(spec[0].get("num_words", 50)), spec[0].get("relation", "at least")
        total = (n + 10 if relation == "at least" else max(1, n // 2)) if not spec[1] else (
            max(1, n // 2) if relation == "at least" else n + 10
        )
        words_each = max(1, -(-total // sentences))
    paragraphs, joiner = 1, "\n\n"
    if (spec := wants("length_constraints:number_paragraphs")) is not None:
        paragraphs = int(spec[0].get("num_paragraphs", 2)) + (1 if spec[1] else 0)
        joiner = "\n\n***\n\n"
    if (spec := wants("length_constraints:nth_paragraph_first_word")) is not None:
        paragraphs = int(spec[0].get("num_paragraphs", 2))
    body = [[_sentence(rng, words_each, avoid_letter) for _ in range(max(1, sentences // paragraphs))]
            for _ in range(paragraphs)]  # fmt: skip
    if (spec := wants("language:response_language")) is not None:
        language = str(spec[0].get("language", "en"))
        text = _LANGUAGES.get("en" if spec[1] else language) or _LANGUAGES["en"]
        if spec[1] and language == "en":
            text = _LANGUAGES["de"]
        body = [[text] for _ in range(paragraphs)]
    if (spec := wants("length_constraints:nth_paragraph_first_word")) is not None:
        nth, first = int(spec[0].get("nth_paragraph", 1)), str(spec[0].get("first_word", "so"))
        index = min(max(nth, 1), len(body)) - 1
        body[index][0] = (("Then" if spec[1] else first.capitalize()) + " " + body[index][0].lower())
    # -- keywords ------------------------------------------------------------------------------------------------
    extra: list[str] = []
    if (spec := wants("keywords:existence")) is not None:
        keywords = [str(k) for k in spec[0].get("keywords") or []]
        if spec[1] and keywords:
            keywords = keywords[:-1]
        extra += keywords
    if (spec := wants("keywords:frequency")) is not None:
        keyword, n = str(spec[0].get("keyword", "word")), int(spec[0].get("frequency", 1))
        at_least = spec[0].get("relation", "at least") == "at least"
        count = (n + 1 if at_least else max(0, n - 1)) if not spec[1] else (max(0, n - 1) if at_least else n + 1)
        extra += [keyword] * count
    if (spec := wants("keywords:letter_frequency")) is not None:
        letter, n = str(spec[0].get("letter", "z")).lower(), int(spec[0].get("let_frequency", 1))
        at_least = spec[0].get("let_relation", "at least") == "at least"
        count = n + 1 if at_least != spec[1] else max(0, n - 1)  # past the bound, or short of it
        if count:
            extra.append(letter * count)
    if (spec := wants("keywords:forbidden_words")) is not None and spec[1]:
        extra += [str(w) for w in (spec[0].get("forbidden_words") or [])[:1]]
    if extra:
        body[-1].append(" ".join(extra) + ".")
    # -- marks in the text ---------------------------------------------------------------------------------------
    text = joiner.join(" ".join(p) for p in body)
    if (spec := wants("detectable_content:number_placeholders")) is not None:
        n = int(spec[0].get("num_placeholders", 1)) - (1 if spec[1] else 0)
        text += " " + " ".join(f"[place {i + 1}]" for i in range(max(0, n)))
    if (spec := wants("detectable_format:number_highlighted_sections")) is not None:
        n = int(spec[0].get("num_highlights", 1)) - (1 if spec[1] else 0)
        text += "\n\n" + " ".join(f"*highlighted part {i + 1}*" for i in range(max(0, n)))
    if (spec := wants("detectable_format:number_bullet_lists")) is not None:
        n = int(spec[0].get("num_bullets", 2)) + (1 if spec[1] else 0)
        text += "\n\n" + "\n".join(f"* {_sentence(rng, 4, avoid_letter)}" for _ in range(n))
    if (spec := wants("detectable_format:multiple_sections")) is not None:
        splitter, n = str(spec[0].get("section_spliter", "Section")), int(spec[0].get("num_sections", 2))
        n = max(1, n - 1) if spec[1] else n
        text = "\n\n".join(f"{splitter} {i + 1}\n{_sentence(rng, 6, avoid_letter)}" for i in range(n)) + "\n\n" + text
    if (spec := wants("detectable_format:title")) is not None and not spec[1]:
        text = "<<a quiet morning>>\n\n" + text
    if (spec := wants("detectable_content:postscript")) is not None:
        marker = str(spec[0].get("postscript_marker", "P.S."))
        text += "\n\n" + ("Note: that is all." if spec[1] else f"{marker} that is all.")
    if (spec := wants("startend:end_checker")) is not None:
        phrase = str(spec[0].get("end_phrase", "Is there anything else I can help with?"))
        text += "\n\n" + (phrase + " Thanks." if spec[1] else phrase)
    if (spec := wants("detectable_format:constrained_response")) is not None:
        text = "I am not sure." if spec[1] else rng.choice(_FIXED_ANSWERS)
    # -- case ----------------------------------------------------------------------------------------------------
    if (spec := wants("change_case:english_capital")) is not None:
        text = text.upper() if not spec[1] else text
    if (spec := wants("change_case:english_lowercase")) is not None:
        text = text.lower() if not spec[1] else text.upper()
    if (spec := wants("change_case:capital_word_frequency")) is not None:
        n = int(spec[0].get("capital_frequency", 1))
        at_least = spec[0].get("capital_relation", "at least") == "at least"
        count = (n + 1 if at_least else max(0, n - 1)) if not spec[1] else (max(0, n - 1) if at_least else n + 1)
        text += " " + " ".join(["NOTE"] * count) if count else ""
    if (spec := wants("punctuation:no_comma")) is not None and spec[1]:
        text = text.replace(" ", ", ", 1)
    # -- what wraps the whole ------------------------------------------------------------------------------------
    if (spec := wants("combination:repeat_prompt")) is not None:
        prompt = str(spec[0].get("prompt_to_repeat", task.question))
        text = (("Here is my answer." if spec[1] else prompt) + "\n\n" + text)
    if (spec := wants("combination:two_responses")) is not None:
        second = _sentence(rng, 6, avoid_letter)
        text = text + ("\n\n" if spec[1] else "\n******\n") + second
    if (spec := wants("detectable_format:json_format")) is not None:
        wrapped = json.dumps({"answer": text}, ensure_ascii=False, indent=2)
        text = ("Here it is: " + wrapped) if spec[1] else wrapped
    if (spec := wants("startend:quotation")) is not None:
        text = text if spec[1] else f'"{text}"'
    return text
