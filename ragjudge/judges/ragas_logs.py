"""ragas's own log lines ("Prompt fix_output_format failed to parse output: ...", "No statements were generated from
the answer.") for failures ragjudge already records in the item's result (an error with the raw answer): dropped, so
that a run's stderr holds each problem once, ragjudge's way. Only while ragjudge's own ragas call runs (a context
variable: concurrent items, other threads and a user's own ragas calls keep ragas's logging as it is)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_RECORDING: ContextVar[bool] = ContextVar("ragjudge_records_ragas_failures", default=False)


class _DropWhileRecorded(logging.Filter):
    """Drops a ragas logger's record when it was made inside `recorded_by_ragjudge()`."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _RECORDING.get()


_FILTER = _DropWhileRecorded()
_seen = 0


def _attach() -> None:
    """Put the filter on every ragas logger (a logger's filters see the records it makes, not its children's); ragas
    makes its loggers as its modules are imported, so those made since the last look are caught up."""
    global _seen
    loggers = logging.Logger.manager.loggerDict
    if len(loggers) == _seen:
        return
    for name in list(loggers):
        if name == "ragas" or name.startswith("ragas."):
            logger = logging.getLogger(name)
            if _FILTER not in logger.filters:
                logger.addFilter(_FILTER)
    _seen = len(loggers)


@contextmanager
def recorded_by_ragjudge() -> Iterator[None]:
    """Within: ragas's log lines are not printed (every failure they report ends in the item's Score)."""
    _attach()
    token = _RECORDING.set(True)
    try:
        yield
    finally:
        _RECORDING.reset(token)
