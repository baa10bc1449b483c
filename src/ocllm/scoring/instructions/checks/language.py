"""IFEval's `language` instruction: the whole answer in one language, detected by `langdetect` as IFEval does.

langdetect (a port of Google's language-detection; its 55 language profiles ship inside the package, nothing is
downloaded) samples n-grams at random. Its detector is built here from its own factory with the seed 0, so the
same text gets the same verdict in every process and on every machine. The profiles are read from the installed
package once per process, on the first language check.

The verdict is IFEval's: followed when the most probable language is the one asked. The evidence gives that
language and its probability (`language: de, probability 0.99`). Deliberate differences from IFEval: "zh" (not a
langdetect code, so IFEval can never follow it) matches langdetect's "zh-cn" and "zh-tw"; an answer with fewer
than `SHORT_LETTERS` letters is flagged as too short for a reliable detection (the verdict stands). Like IFEval, an
answer with nothing to detect (no letters: digits, symbols) counts as followed, and the evidence says so.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import langdetect
from langdetect.detector_factory import DetectorFactory
from langdetect.lang_detect_exception import LangDetectException

from ocllm.scoring.instructions.checks.registry import Check, Measured, Param

# The languages langdetect 1.0.9 has profiles for (its `profiles` folder; tests check the two agree), and "zh".
LANGUAGES = (
    "af", "ar", "bg", "bn", "ca", "cs", "cy", "da", "de", "el", "en", "es", "et", "fa", "fi", "fr", "gu", "he", "hi",
    "hr", "hu", "id", "it", "ja", "kn", "ko", "lt", "lv", "mk", "ml", "mr", "ne", "nl", "no", "pa", "pl", "pt", "ro",
    "ru", "sk", "sl", "so", "sq", "sv", "sw", "ta", "te", "th", "tl", "tr", "uk", "ur", "vi", "zh-cn", "zh-tw", "zh",
)  # fmt: skip
# Below this many letters a detection is unreliable: langdetect needs a sentence or so of n-grams, and a two-word
# greeting gets probabilities like 0.43. Letters, not words: Chinese, Japanese and Thai write no spaces, so one
# "word" may be a whole sentence.
SHORT_LETTERS = 20
SEED = 0


@functools.cache
def _factory() -> DetectorFactory:
    factory = DetectorFactory()
    factory.load_profile(str(Path(langdetect.__file__).parent / "profiles"))
    factory.seed = SEED  # this factory's detectors only; langdetect's global factory is left alone
    return factory


def detect(text: str) -> list[tuple[str, float]]:
    """The languages langdetect finds in `text`, most probable first, with their probabilities (seeded, so the
    same text always gives the same list). Raises langdetect's LangDetectException when there is nothing to
    detect."""
    detector = _factory().create()
    detector.append(text)
    return [(found.lang, found.prob) for found in detector.get_probabilities()]


def _matches(found: str, wanted: str) -> bool:
    return found == wanted or (wanted == "zh" and found in ("zh-cn", "zh-tw"))


def _response_language(text: str, kwargs: Mapping[str, Any]) -> Measured:
    wanted = kwargs["language"]
    try:
        found = detect(text)
    except LangDetectException:
        return Measured(True, "no language detectable (no letters): counted as followed, as IFEval does")
    lang, prob = found[0]
    measured = f"language: {lang}, probability {prob:.2f}"
    if not _matches(lang, wanted):
        measured += f", needed {wanted}"
    letters = sum(char.isalpha() for char in text)
    if letters < SHORT_LETTERS:
        measured += f" (short text, {letters} letters: detection unreliable)"
    return Measured(_matches(lang, wanted), measured)


CHECKS = [
    Check(
        "language:response_language",
        "the answer in one language",
        (Param("language", (str,), choices=LANGUAGES),),
        _response_language,
    ),
]
