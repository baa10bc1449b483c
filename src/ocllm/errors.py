"""The errors a user can cause. The CLI prints them as one line and exits with code 2."""


class OcllmError(Exception):
    """A problem with the user's input, flags or environment, stated in one line."""


class InputError(OcllmError):
    """An input file is unreadable or does not have the expected shape."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, with what the interrupted command left behind (said in the one line it ends with)."""

    def __init__(self, advice: str) -> None:
        super().__init__(advice)
        self.advice = advice


class MissingExtra(OcllmError):
    """A feature whose library is an optional extra of the package (pyproject's optional-dependencies), asked for
    where that library is not installed: one line naming what needs it and the install command."""

    def __init__(self, need: str, module: str, extra: str) -> None:
        super().__init__(f"{need} needs {module}: pip install 'ocllm[{extra}]'")
        self.module = module
        self.extra = extra
