"""Progress bars on stderr (stdout stays clean for --format json)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


class ProgressBars:
    def __init__(self, progress: Progress | None):
        self._progress = progress

    def bar(self, label: str, total: int, completed: int = 0) -> Callable[[int], None]:
        """Add a bar; returns the callback that advances it."""
        if self._progress is None:
            return lambda n: None
        task = self._progress.add_task(label, total=total, completed=completed)
        return lambda n: self._progress.advance(task, n)  # type: ignore[union-attr]


@contextmanager
def progress_bars(enabled: bool = True) -> Iterator[ProgressBars]:
    if not enabled:
        yield ProgressBars(None)
        return
    progress = Progress(TextColumn("{task.description:<16}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TimeRemainingColumn(), console=Console(stderr=True), transient=False)
    with progress:
        yield ProgressBars(progress)
