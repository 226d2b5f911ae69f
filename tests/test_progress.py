"""Progress bars in a notebook: without ipywidgets, rich would warn once per bar; ragjudge draws plain text there."""

from __future__ import annotations

import importlib.util
import warnings

import pytest
from rich.console import Console
from rich.progress import Progress

from ragjudge.progress import progress_console


@pytest.mark.skipif(importlib.util.find_spec("ipywidgets") is not None, reason="ipywidgets is installed here")
def test_a_notebook_without_ipywidgets_gets_bars_and_no_warning() -> None:
    with pytest.warns(UserWarning, match="ipywidgets"):  # what a notebook user saw per bar before
        with Progress(console=Console(stderr=True, force_jupyter=True)) as progress:
            progress.add_task("judging", total=1)
    console = progress_console(jupyter=True)
    assert not console.is_jupyter and not console.is_terminal
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with Progress(console=console) as progress:
            task = progress.add_task("judging", total=2)
            progress.advance(task, 2)


def test_a_terminal_keeps_its_console() -> None:
    assert not progress_console(jupyter=False).is_jupyter
