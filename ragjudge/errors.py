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
        where = self.file + (f":{self.line}" if self.line is not None else "") if self.file else ""
        return ": ".join(p for p in (where, f"field '{self.field}'" if self.field else "", self.message) if p)


class UsageError(RagjudgeError):
    """A command-line option or configuration value is wrong (unknown judge, model, setting...)."""


class RagjudgeWarning(UserWarning):
    """A problem ragjudge works around (a cache it cannot write); the CLI shows it as one `warning:` line."""


class EnvironmentFault(RagjudgeError):
    """The machine, not the input: a full disk, a read-only or vanished folder, permission denied. The CLI
    exits 3 on these, so scripts can tell "fix your input" (2) from "fix your machine" (3)."""

    exit_code = 3

    def __init__(self, message: str, *, path: str | None = None):
        self.message = message
        self.path = path
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    @classmethod
    def from_os_error(cls, exc: OSError, *, action: str | None = None, path: str | None = None) -> EnvironmentFault:
        """One line from an OSError: the path it names (a temporary sibling shown as its target), the OS reason
        and what ragjudge was doing."""
        return cls(os_reason(exc, action), path=path or _target(exc.filename))


def os_reason(exc: OSError, action: str | None = None) -> str:
    import errno

    reason = exc.strerror or str(exc) or type(exc).__name__
    code = errno.errorcode.get(exc.errno or -1)
    reason = f"{reason} ({code})" if code else reason
    return f"cannot {action}: {reason}" if action else reason


def _target(filename: object) -> str | None:
    """`.results.jsonl.123.tmp` / `results.jsonl.tmp` (atomic writes' temporary files) name `results.jsonl`."""
    if filename is None:
        return None
    import os
    import re

    text = os.fsdecode(filename) if isinstance(filename, (str, bytes, os.PathLike)) else str(filename)
    folder, name = os.path.split(text)
    match = re.fullmatch(r"\.(.+)\.\d+\.tmp|(.+)\.tmp", name)
    if match:
        name = match.group(1) or match.group(2)
    return os.path.join(folder, name) if folder else name
