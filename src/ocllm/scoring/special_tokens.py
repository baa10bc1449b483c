"""A model's special tokens printed as text (`</s>`, `<|im_end|>`, `<|eot_id|>`, `<eoa>`): where a server passes them
through, they stand right after an answer, and are its end, not part of it (not a "less than", not a unit)."""

from __future__ import annotations

import re

# The shapes tokenizers give them: `<|…|>` (ChatML, Llama 3, GPT), and the bare end-of-text names of older models and
# of exam harnesses (`</s>`, `<eos>`, `<eoa>`/`<eoe>`: InternLM's answer and explanation ends). Not HTML (`<sub>`).
SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z_][\w.-]{0,40}\|>|</?(?:s|eos|eot|eoa|eoe|eom|end_of_turn|endoftext|pad)>")
# Special tokens (and the spaces between them) that end a text.
TRAILING_SPECIAL_TOKENS = re.compile(r"(?:[ \t]*" + SPECIAL_TOKEN.pattern + r")+[ \t]*$")
