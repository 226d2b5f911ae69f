"""Running the `ragjudge` command line in this process, offline, and what one invocation gave."""

from __future__ import annotations

import contextlib
import errno
import io
import ipaddress
import os
import re
import shlex
import socket
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from unittest import mock

OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
               "RAGAS_DO_NOT_TRACK": "true"}
PROG = "ragjudge"
WIDE = {"COLUMNS": "1000"}
"""Text runs print at this width, so the headline is one line however long it is."""


@dataclass(frozen=True)
class CliResult:
    """One `ragjudge` invocation: its arguments, exit code, stdout and stderr."""

    args: list[str]
    code: int
    out: str
    err: str

    @property
    def command(self) -> str:
        return shlex.join([PROG, *self.args])

    @property
    def err_lines(self) -> list[str]:
        """stderr's lines but progress bars (a run may draw some before it meets the bad input)."""
        return [line for line in self.err.splitlines() if line.strip() and not _is_progress(line)]

    def shown(self) -> str:
        """For a failure message: the command, exit code and stderr (trimmed)."""
        err = self.err.strip()
        err = err if len(err) < 1500 else err[:700] + "\n…\n" + err[-700:]
        return f"`{self.command}` → exit {self.code}; stderr: {err or '(empty)'}"


def _is_progress(line: str) -> bool:
    return "━" in line or bool(re.search(r"\d+/\d+\s+\d+:\d\d:\d\d", line))


def run_cli(args: Sequence[str], env: Mapping[str, str] | None = None, *, offline: bool = True) -> CliResult:
    """Run the `ragjudge` entry point in this process (no interpreter start-up: a run costs what the bench costs),
    with `env` set and, when `offline`, Hugging Face offline and every non-loopback connection refused (a bench
    that reaches for the network fails loudly instead of passing on a connected machine)."""
    from ragjudge.cli import main

    out, err = io.StringIO(), io.StringIO()
    code: int = 0
    with environ({**(OFFLINE_ENV if offline else {}), **(env or {})}), mock.patch.object(sys, "argv", [PROG, *args]), \
            (_no_network() if offline else contextlib.nullcontext()), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return CliResult(list(args), code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def environ(values: Mapping[str, str]) -> Iterator[None]:
    """`values` set in os.environ for the block; what they replaced (or their absence) restored after it."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _no_network() -> Iterator[None]:
    """Refuse connections to anything but this machine (the local LLM server is on 127.0.0.1)."""
    original_connect, original_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def local(address: Any) -> bool:
        if not isinstance(address, tuple):
            return True  # a Unix socket
        host = str(address[0])
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host.split("%")[0]).is_loopback
        except ValueError:
            return False

    def connect(self: socket.socket, address: Any) -> None:
        if not local(address):
            raise OSError(errno.ENETUNREACH, f"network access refused by the conformance kit ({address[0]})")
        return original_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if not local(address):
            return errno.ENETUNREACH
        return original_connect_ex(self, address)

    with mock.patch.object(socket.socket, "connect", connect), \
            mock.patch.object(socket.socket, "connect_ex", connect_ex):
        yield
