"""MTRAG's (and MTRAG-UN's) generation tasks: found (a local copy, the user cache, or a download into the cache) and
read, with the predictions when a file of them is judged."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge.bench.mtrag.settings import needs_retrieval, tasks_for_setting
from ragjudge.errors import RagjudgeError, UsageError
from ragjudge.formats.files import atomic_output
from ragjudge.formats.jsonl import to_jsonable
from ragjudge.formats.mtrag import predictions_of, read_predictions, read_tasks, require_questions, tasks_of
from ragjudge.llm.cache import default_cache_dir
from ragjudge.models import Prediction, Task

REPOSITORY = "https://raw.githubusercontent.com/IBM/mt-rag-benchmark/main/"
DOWNLOADS = {"mtrag": (("mtrag-human/generation_tasks/reference.jsonl", "human/generation_tasks/reference.jsonl"),
                       "mtrag-reference.jsonl"),
             "mtrag-un": (("mtragun-human/generation_tasks/reference.jsonl",), "mtrag-un-reference.jsonl")}
"""Bench -> the tasks' paths in the benchmark's repository (it moved them once: the current layout first) and the
file they are kept in, in the cache."""


@dataclass(frozen=True)
class MtragData:
    """What a run reads: the tasks (those its setting uses), where from, and the predictions of a judged file."""

    source: Path | str
    """The file or folder read, or the name of the records given in memory (`data`)."""
    tasks: list[Task]
    predictions: dict[str, Prediction] = field(default_factory=dict)
    """Task key -> its prediction, when the answers were read from a predictions file."""


def load(bench: str, *, data: str | None, predictions: str | None, setting: str,
         records: Sequence[Mapping[str, Any]] | None = None) -> MtragData:
    """The tasks of a predictions file (with its answers), else of `data` (see `resolve_bench`) that `setting`
    uses; a setting that retrieves needs every task to have a question to search for. `records`: the tasks given in
    memory instead (`ragjudge.evaluate(rows)`), read by the same parser, record i as line i of the file named by
    `predictions` (or `data`)."""
    lines = None if records is None else list(enumerate(to_jsonable([dict(r) for r in records])))
    if predictions is not None:
        pairs = read_predictions(predictions) if lines is None else predictions_of(lines, file=predictions)
        return MtragData(predictions if lines is not None else Path(predictions), [t for t, _ in pairs],
                         {t.key: p for t, p in pairs})
    source: Path | str = resolve_bench(bench, data) if lines is None else str(data)
    tasks = read_tasks(source) if lines is None else tasks_of(lines, file=str(source))
    tasks = tasks_for_setting(tasks, setting)
    if needs_retrieval(setting):
        require_questions(tasks, source, lines)
    return MtragData(source, tasks)


def resolve_bench(bench: str, data: str | None = None) -> Path:
    """`mtrag` / `mtrag-un` → that benchmark's human reference tasks (--data, $RAGJUDGE_DATA, else downloaded
    into the cache); anything else must be a file or folder in MTRAG format."""
    if bench in DOWNLOADS:
        local = data or os.environ.get("RAGJUDGE_DATA")
        if local:
            path = Path(local)
            if not path.exists():
                raise UsageError(f"--data/RAGJUDGE_DATA points to {path}, which does not exist")
            return path
        paths, name = DOWNLOADS[bench]
        return download_mtrag(default_cache_dir() / "data", tuple(REPOSITORY + p for p in paths), file_name=name,
                              upstream=paths[0])
    path = Path(bench)
    if path.exists():
        return path
    raise UsageError(f"unknown bench {bench!r}: use 'mtrag' or a path to MTRAG-format tasks (file or folder)")


def download_mtrag(folder: Path, urls: tuple[str, ...], timeout: float = 30.0, *,
                   file_name: str = DOWNLOADS["mtrag"][1], upstream: str = DOWNLOADS["mtrag"][0][0]) -> Path:
    target = folder / file_name
    if target.exists() and target.stat().st_size > 0:
        return target
    import httpx

    reasons = []
    for url in urls:
        try:
            response = httpx.get(url, timeout=timeout, follow_redirects=True)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            reasons.append(f"{url}: {type(exc).__name__}")
            continue
        with atomic_output(target) as tmp:
            tmp.write_bytes(response.content)
        return target
    raise RagjudgeError(
        "could not download the MTRAG tasks (" + "; ".join(reasons) + f"). Offline? Get {upstream} from the "
        "MT-RAG benchmark repository and pass --data PATH or set RAGJUDGE_DATA=PATH"
    )
