"""Progress bars on stderr (stdout stays clean for --format json)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text


class RateColumn(ProgressColumn):
    """Items per second (texts encoded, samples judged): what tells a slow step from a stuck one."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.1f}/s" if speed else "", style="progress.data.speed")


class ProgressBars:
    def __init__(self, progress: Progress | None):
        self._progress = progress

    def bar(self, label: str, total: int, completed: int = 0) -> Callable[[int], None]:
        """Add a bar; returns the callback that advances it."""
        if self._progress is None:
            return lambda n: None
        task = self._progress.add_task(label, total=total, completed=completed)
        return lambda n: self._progress.advance(task, n)  # type: ignore[union-attr]

    def say(self, line: str) -> None:
        """One line on stderr, above the bars while they are drawn (a line printed past them would be redrawn over)."""
        if self._progress is None:
            print(line, file=sys.stderr, flush=True)
        else:
            self._progress.console.print(line, markup=False, highlight=False, soft_wrap=True)


def progress_console(jupyter: bool | None = None) -> Console:
    """stderr, as a terminal or a notebook shows it. In Jupyter rich draws bars with ipywidgets; without it installed
    it would warn once per bar ("install ipywidgets for Jupyter support"), so there the bars are drawn as plain text
    instead: no animation, the finished bars once, no warning."""
    console = Console(stderr=True)
    if jupyter is None:
        jupyter = console.is_jupyter
    if jupyter and importlib.util.find_spec("ipywidgets") is None:
        return Console(stderr=True, force_jupyter=False, force_terminal=False)
    return console if jupyter == console.is_jupyter else Console(stderr=True, force_jupyter=jupyter)


@contextmanager
def progress_bars(enabled: bool = True) -> Iterator[ProgressBars]:
    if not enabled:
        yield ProgressBars(None)
        return
    # The label column gives way first (a long model name folds onto a second line): counts and times are
    # never cut to `0:00:…`, at 80 columns or in a pipe.
    label = TextColumn("{task.description}", table_column=Column(min_width=16, ratio=3, overflow="fold"))
    bar = BarColumn(bar_width=None, table_column=Column(min_width=10, ratio=1))
    fixed = Column(no_wrap=True)
    progress = Progress(label, bar, MofNCompleteColumn(table_column=fixed), RateColumn(table_column=fixed),
                        TimeElapsedColumn(table_column=fixed),
                        TimeRemainingColumn(table_column=fixed), console=progress_console(), transient=False)
    with progress:
        try:
            yield ProgressBars(progress)
        finally:
            if not progress.tasks:  # no bar was shown: stopping would print an empty line (stderr piped)
                progress.console.quiet = True
