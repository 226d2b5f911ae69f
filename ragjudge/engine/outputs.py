"""Where a run writes (the files are `formats.run_layout`'s), written so that a reader never sees half a file and two
runs never share a folder."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragjudge.errors import UsageError
from ragjudge.formats.files import atomic_output, writing
from ragjudge.formats.jsonl import to_jsonable, write_jsonl
from ragjudge.formats.run_layout import OutputPaths
from ragjudge.formats.samples import Sample, write_samples

if TYPE_CHECKING:  # pandas takes a third of a second to import: only when the run's table is written
    import pandas as pd

__all__ = ["OutputLock", "OutputPaths", "atomic_write", "tidy_frame", "write_outputs"]


class OutputLock:
    """An exclusive lock on a run's output: a second run on the same --out stops at once (it would otherwise interleave
    journal lines and pay for every call twice). The lock file is removed when the run ends however it ends; the lock
    dies with the process (a SIGKILL leaves the file, which the next run takes over)."""

    def __init__(self, path: Path, owner: Path | None = None):
        self.path = path
        self.owner = owner or path.parent
        """What the lock guards, as the user named it: the run folder, or `ragjudge judge`'s results file."""
        self._fh: Any = None

    def __enter__(self) -> OutputLock:
        import fcntl

        while True:
            with writing(self.path, "create the run's lock file"):
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fh = self.path.open("a+")
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.seek(0)
                holder = fh.read().strip() or "unknown"
                fh.close()
                raise UsageError(f"{self.owner} is in use by another ragjudge run (pid {holder}); wait for it "
                                 "to finish or pass another --out") from None
            if _same_file(fh, self.path):
                break
            _close_quietly(fh)  # locked a file its holder removed as it finished: lock the one at the path now
        try:
            with writing(self.path, "write the run's lock file"):
                fh.seek(0)
                fh.truncate()
                fh.write(str(os.getpid()))
                fh.flush()
        except BaseException:
            _close_quietly(fh)
            raise
        self._fh = fh
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            try:  # removed while still held: a run that opened it meanwhile finds it gone and takes a new one
                self.path.unlink(missing_ok=True)
            except OSError:
                pass
            _close_quietly(self._fh)  # closing releases the lock
            self._fh = None


def _same_file(fh: Any, path: Path) -> bool:
    """Whether the open lock file is still the one at `path` (not removed, nor replaced, since it was opened)."""
    try:
        held, now = os.fstat(fh.fileno()), os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:  # cannot tell: keep the lock taken
        return True
    return (held.st_dev, held.st_ino) == (now.st_dev, now.st_ino)


def _close_quietly(fh: Any) -> None:
    try:
        fh.close()
    except OSError:  # a buffered write that cannot land (full disk) was already reported
        pass


def atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """`write` a temporary sibling, then rename it over `path` (`formats.files.atomic_output`)."""
    with atomic_output(path) as tmp:
        write(tmp)


def tidy_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """A flat table that CSV and Parquet both accept: nested values become JSON text, mixed columns text."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    for column in frame.columns:
        values = frame[column]
        if values.dtype != object:
            continue
        kinds = {type(v) for v in values if v is not None and not (isinstance(v, float) and pd.isna(v))}
        if kinds & {list, dict, tuple}:
            frame[column] = [None if v is None else json.dumps(to_jsonable(v), ensure_ascii=False) for v in values]
        elif len(kinds) > 1:
            if kinds <= {int, float, bool}:
                frame[column] = pd.to_numeric(values, errors="coerce")
            else:
                frame[column] = [None if v is None else str(v) for v in values]
    return frame


def write_outputs(paths: OutputPaths, samples: list[Sample], records: list[dict[str, Any]] | None, frame: pd.DataFrame,
                  summary: dict[str, Any], run_info: dict[str, Any], artifacts: dict[str, str] | None = None) -> None:
    write_samples(paths.samples, samples)
    for name, text in (artifacts or {}).items():
        atomic_write(paths.artifact(name), lambda p, text=text: p.write_text(text, encoding="utf-8"))
    if records is not None:
        write_jsonl(paths.results, records)
    atomic_write(paths.csv, lambda p: frame.to_csv(p, index=False))
    atomic_write(paths.parquet, lambda p: frame.to_parquet(p, index=False))
    atomic_write(paths.summary, lambda p: p.write_text(json.dumps(to_jsonable(summary), indent=2,
                                                                   ensure_ascii=False) + "\n", encoding="utf-8"))
    atomic_write(paths.run, lambda p: p.write_text(json.dumps(to_jsonable(run_info), indent=2, default=str,
                                                               ensure_ascii=False) + "\n", encoding="utf-8"))
