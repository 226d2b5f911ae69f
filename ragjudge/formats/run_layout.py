"""A run's files, written down once: the engine writes them (`engine.outputs`) and every reader (the report,
`correlate`, `export`, `retrieval-eval`, `load_run`) finds them here, so a renamed file changes in one place.
`eval --out DIR` writes a run folder (`DIR/samples.jsonl`, ...); `judge --out X.jsonl` writes X.jsonl with its
siblings named after it (`X.samples.jsonl`, ...), and `--out DIR/results.jsonl` makes DIR a run folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SAMPLE_LOG = "samples.jsonl"
RESULTS = "results.jsonl"
LOCK = ".ragjudge.lock"
FOLDER_FILES = {"results": RESULTS, "samples": SAMPLE_LOG, "solve_journal": "predictions.jsonl",
                "score_journal": "judgements.jsonl", "csv": "results.csv", "parquet": "results.parquet",
                "summary": "summary.json", "run": "run.json", "lock": LOCK, "usage": "usage.jsonl",
                "batches": "batches.jsonl"}
"""Each file of a run folder; beside a results file X.jsonl, the same file is X.<name>, or X.<BESIDE[key]>."""
BESIDE = {"csv": "csv", "parquet": "parquet", "lock": "lock"}


@dataclass
class OutputPaths:
    """Where a run's files are: in a run folder, or beside `ragjudge judge`'s results file."""

    results: Path
    samples: Path
    """The sample log (`ragjudge.sample/1`): one record per sample, for every bench."""
    solve_journal: Path
    score_journal: Path
    csv: Path
    parquet: Path
    summary: Path
    run: Path
    lock: Path
    usage: Path
    """The run's LLM usage log: every request of every invocation (run.json sums it)."""
    batches: Path
    """With --batch: every provider batch submitted, so a restart waits for it instead of submitting again."""

    @classmethod
    def in_folder(cls, folder: Path) -> OutputPaths:
        return cls(**{key: folder / name for key, name in FOLDER_FILES.items()})

    @classmethod
    def beside(cls, results: Path) -> OutputPaths:
        """`ragjudge judge --out X.jsonl`'s files, named after X; `--out DIR/results.jsonl` makes DIR a run folder."""
        if results.name == RESULTS:
            return cls.in_folder(results.parent)
        stem = results.name.removesuffix(".jsonl")
        files = {key: results.with_name(stem + "." + BESIDE.get(key, name))
                 for key, name in FOLDER_FILES.items() if key != "results"}
        return cls(results=results, **files)

    @classmethod
    def of(cls, path: Path) -> OutputPaths:
        """The files of the run RUN names: a run folder, a results file (or the name given to --out), or either's
        sample log."""
        if path.is_dir():
            return cls.in_folder(path)
        if path.name == SAMPLE_LOG:
            return cls.in_folder(path.parent)
        if path.name.endswith("." + SAMPLE_LOG):
            return cls.beside(path.with_name(path.name.removesuffix("." + SAMPLE_LOG) + ".jsonl"))
        return cls.beside(path)

    @property
    def folder(self) -> Path:
        return self.results.parent

    @property
    def owner(self) -> Path:
        """What the user named with --out: the run folder, or the results file its siblings sit beside."""
        return self.folder if self.lock.name == LOCK else self.results

    def artifact(self, name: str) -> Path:
        """A bench's extra file (plan.jsonl, run.trec): in the run folder, or beside a results file."""
        if self.results.name == RESULTS:
            return self.folder / name
        return self.results.with_name(self.results.name.removesuffix(".jsonl") + "." + name)
