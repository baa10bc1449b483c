"""What a run knows of the server that answered it, read from its manifest: the kind and version ocllm probed, and
for a server ocllm started (a lane's `[server]` table) the flags of its command that decide how answers are parsed.

A record, not advice: `advice.py` words what to change from it. Only the flags are kept, never the
command itself (it may hold a credential), so the record can travel into a metrics document's `source` and a later
rescore of that document still knows them. A server that was already running has no command here: its flags are
unknown, and advice must say what to check rather than assert a flag is off.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

# Flags whose value is the next word (or after "="): the setting's name in the record -> the flag's spellings.
_VALUED: dict[str, tuple[str, ...]] = {
    "tool_call_parser": ("--tool-call-parser",),  # vLLM, SGLang
    "reasoning_parser": ("--reasoning-parser",),  # vLLM, SGLang
    "reasoning_format": ("--reasoning-format",),  # llama.cpp
}
# Flags that switch a setting on or off: the setting -> (spellings that turn it on, spellings that turn it off).
_SWITCHES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "jinja": (("--jinja",), ("--no-jinja",)),  # llama.cpp: its Jinja chat templates, and with them its tool parsing
    "enable_auto_tool_choice": (("--enable-auto-tool-choice",), ()),  # vLLM: tool_choice "auto" served at all
}
# Flags whose presence alone matters: another chat template than the model's own.
_PRESENT: dict[str, tuple[str, ...]] = {"chat_template": ("--chat-template", "--chat-template-file")}
# Environment variables that set those flags (llama.cpp reads LLAMA_ARG_*): the manifest keeps a server's env by
# its names only, so a setting one of them names is unknown, whatever the command says.
_ENV = {
    "jinja": ("LLAMA_ARG_JINJA", "LLAMA_ARG_NO_JINJA"),
    "reasoning_format": ("LLAMA_ARG_THINK",),
    "chat_template": ("LLAMA_ARG_CHAT_TEMPLATE", "LLAMA_ARG_CHAT_TEMPLATE_FILE"),
}


class ServerFacts(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The server of one run as far as its manifest tells. `flags` holds only what the command shows: a setting
    it does not name is absent (its default, which may depend on the version); a setting an env name may set is
    absent too (its value was never recorded)."""

    kind: str | None = None  # "llama.cpp", "vllm", "sglang", "ollama", "unknown"; None: no manifest said
    version: str | None = None  # as the server reported it (llama.cpp: its build, "b5000" or "5000 (abc1234)")
    managed: bool = False  # ocllm started it from the lane's command: `flags` is what that command set
    flags: dict[str, Any] = msgspec.field(default_factory=dict)
    # What the server itself reported of its settings when asked (SGLang's /get_server_info holds its arguments).
    reported: dict[str, Any] = msgspec.field(default_factory=dict)
    # The ocllm simulator answered (the manifest's `simulated`): no model did. Left out when false, so the record of
    # a real server reads as it did before it was said.
    simulated: bool = False

    def flag(self, name: str) -> Any:
        """A setting as the command or the server reported it; None when neither did."""
        return self.flags.get(name, self.reported.get(name))


def command_flags(argv: list[str], env_names: Sequence[str] = ()) -> dict[str, Any]:
    """The parsing flags of a server command (`["llama-server", "-m", "x.gguf", "--jinja"]`). A wrapper's words
    (`sh -c "llama-server --no-jinja"`) are split again, so a flag inside one is read; the last spelling wins, as
    argparse and llama.cpp's parser both take it."""
    words: list[str] = []
    for word in argv:
        try:
            words += shlex.split(word) if " " in word else [word]
        except ValueError:  # an unclosed quote inside a wrapper's word: read it as it stands
            words.append(word)
    flags: dict[str, Any] = {}
    for at, word in enumerate(words):
        flag, equals, value = word.partition("=")
        for name, spellings in _VALUED.items():
            if flag in spellings:
                given = value if equals else (words[at + 1] if at + 1 < len(words) else "")
                flags[name] = given
        for name, (on, off) in _SWITCHES.items():
            if flag in on:
                flags[name] = True
            elif flag in off:
                flags[name] = False
        for name, spellings in _PRESENT.items():
            if flag in spellings:
                flags[name] = True
    for name, (_, off) in _SWITCHES.items():
        if name not in flags and not off and name not in _ENV:
            flags[name] = False  # a flag with no "off" spelling and no env: absent from the command is off
    for name, variables in _ENV.items():
        if any(variable in env_names for variable in variables):
            flags.pop(name, None)
    return flags


def server_facts(manifest: Mapping[str, Any]) -> ServerFacts | None:
    """The facts of a run's manifest.json (None when it says nothing of its server: an older manifest)."""
    kind = manifest.get("server_kind")
    identities = manifest.get("server_identity")
    identities = [i for i in identities if isinstance(i, Mapping)] if isinstance(identities, list) else []
    server = manifest.get("server")
    simulated = manifest.get("simulated") is True
    if not isinstance(kind, str) and not identities and not isinstance(server, Mapping) and not simulated:
        return None
    version = next((i["version"] for i in identities if isinstance(i.get("version"), str)), None)
    reported: dict[str, Any] = {}
    for identity in identities:
        said = identity.get("reported")
        if isinstance(said, Mapping):
            reported.update({k: v for k, v in said.items() if isinstance(k, str)})
    facts = ServerFacts(
        kind=kind if isinstance(kind, str) else None, version=version, reported=reported, simulated=simulated
    )
    if isinstance(server, Mapping) and isinstance(server.get("command"), list | str):
        command = server["command"]
        argv = shlex.split(command) if isinstance(command, str) else [str(word) for word in command]
        env = server.get("env")
        names = [str(name) for name in env] if isinstance(env, list) else []
        facts.managed = True
        facts.flags = command_flags(argv, names)
    return facts


def simulated(record: Any) -> bool:
    """Whether a document's `source.server` (a ServerFacts as JSON) says the ocllm simulator answered; False for
    anything else, a record written before it was said included."""
    facts = facts_of(record)
    return facts is not None and facts.simulated


def facts_of(record: Any) -> ServerFacts | None:
    """A ServerFacts written into a document (`source.server`) read back; None for anything else."""
    if not isinstance(record, Mapping):
        return None
    try:
        return msgspec.convert(record, ServerFacts)
    except msgspec.ValidationError:
        return None
