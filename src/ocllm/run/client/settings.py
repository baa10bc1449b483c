"""How to reach one OpenAI-compatible endpoint, and how hard to try: the settings every part of the client reads."""

from __future__ import annotations

from typing import Any

import msgspec

from ocllm.run.scrub import REDACTED as _REDACTED


class ClientSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How to reach one endpoint, and how hard to try."""

    base_url: str  # e.g. "http://127.0.0.1:8000/v1"; requests go to f"{base_url}/chat/completions"
    api_key: str | None = None  # sent as "Authorization: Bearer ..."; never stored in a Sample, an error or a log
    stream: bool = False
    timeout_s: float = 600.0  # total per attempt: connecting, sending, and reading the last byte
    connect_timeout_s: float = 10.0
    max_attempts: int = 4  # first try included
    backoff_base_s: float = 0.5  # full jitter: sleep uniform(0, min(backoff_max_s, base * 2**n)) before retry n+1
    backoff_max_s: float = 30.0
    retry_budget_s: float = 300.0  # no retry starts later than this after the first attempt started
    omit_fields: tuple[str, ...] = ()  # request fields never sent, even those the client adds (stream_options)
    # One of several replicas: a connection that cannot even be made is given back at once (not retried here),
    # so that the caller sends the request to another replica (endpoints.py).
    fail_over: bool = False

    def __post_init__(self) -> None:
        # Caught here, a bad setting is one clear error at start-up rather than N error Samples.
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {self.base_url!r}")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        for name in ("timeout_s", "connect_timeout_s"):
            value = getattr(self, name)
            if not value > 0:
                raise ValueError(f"{name} must be positive, got {value}")
        for name in ("backoff_base_s", "backoff_max_s", "retry_budget_s"):
            value = getattr(self, name)
            if not value >= 0:
                raise ValueError(f"{name} must not be negative, got {value}")

    # msgspec's generated repr (and rich's pretty-printer) would show the key to anyone who logs the settings.
    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self.__rich_repr__())
        return f"ClientSettings({fields})"

    def __rich_repr__(self) -> Any:
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if name == "api_key" and value is not None:
                value = _REDACTED
            yield name, value
