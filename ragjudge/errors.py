"""Errors that reach the user as one clear line (file:line: field: message), never a traceback."""

from __future__ import annotations


class RagjudgeError(Exception):
    """Base class for errors ragjudge reports to the user; the CLI exits 2 on these."""


class InputError(RagjudgeError):
    """Bad input data, located as precisely as we can: file, line and field."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None, field: str | None = None):
        self.message = message
        self.file = file
        self.line = line
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.file:
            where = self.file + (f":{self.line}" if self.line is not None else "")
        parts = [p for p in (where, f"field '{self.field}'" if self.field else "", self.message) if p]
        return ": ".join(parts)


class UsageError(RagjudgeError):
    """A command-line option or configuration value is wrong (unknown judge, model, setting...)."""
