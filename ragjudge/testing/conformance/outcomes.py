"""What a command's outcome must look like: a refusal (exit 2, one line naming the file, no result written), or a
report that is HTML."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ragjudge.testing.conformance.cli import CliResult

LEFT_AFTER_FAILURE = {".ragjudge.lock", "predictions.jsonl", "judgements.jsonl", "usage.jsonl", "batches.jsonl"}
"""What a run that stopped on bad input may leave in its output folder: its lock and journals (work done before the
bad file was read, reused by the next run), never a result."""


def one_line_error(done: CliResult, names: Sequence[Path | str | re.Pattern[str]], fields: Sequence[str]
                   ) -> list[str]:
    """Exit 2, one `error:` line on stderr and no traceback, naming each of `names` (a Path: as given, or resolved;
    a pattern: matching) and each of `fields`."""
    problems = []
    if done.code != 2:
        problems.append(f"exit {done.code}, not 2")
    lines = done.err_lines
    if "Traceback" in done.err:
        problems.append("a traceback")
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines on stderr, not one")
    message = "\n".join(lines)
    if lines and not lines[0].startswith("error: "):
        problems.append("the line does not start with 'error: '")
    for name in names:
        if isinstance(name, re.Pattern):
            if not name.search(message):
                problems.append(f"it does not name {name.pattern} (with the line)")
            continue
        spellings = {str(name)} if not isinstance(name, Path) else {str(name), str(name.resolve())}
        if not any(s in message for s in spellings):
            problems.append(f"it does not name {name}")
    for key in fields:
        if key not in message:
            problems.append(f"it does not name the field {key!r}")
    return problems


def nothing_written(out: Path) -> list[str]:
    if not out.exists():
        return []
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()
                     and p.relative_to(out).as_posix() not in LEFT_AFTER_FAILURE)
    return [f"it wrote {', '.join(written)} to the output folder"] if written else []


def is_html(path: Path) -> bool:
    try:
        head = path.read_text(encoding="utf-8", errors="replace")[:2000].lower()
    except OSError:
        return False
    return "<html" in head or "<!doctype html" in head
