"""A run's files are written down once (`formats.run_layout`, issue 42 item 3): the engine writes where
`OutputPaths` says, and every reader (`locate_run`, `samples_file`) finds the same files, however RUN is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragjudge.engine.outputs import OutputPaths as Written
from ragjudge.formats.run_layout import OutputPaths
from ragjudge.formats.samples import locate_run, run_sample_log, samples_file


def touch(files: OutputPaths) -> None:
    for path in (files.samples, files.summary, files.run):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n", encoding="utf-8")


def test_the_engine_writes_the_layout_the_readers_read() -> None:
    assert Written is OutputPaths  # one declaration, not two that must agree


@pytest.mark.parametrize("how", ["folder", "folder/samples.jsonl", "folder/results.jsonl"])
def test_a_run_folder_is_found_however_it_is_named(tmp_path: Path, how: str) -> None:
    written = OutputPaths.in_folder(tmp_path / "folder")
    touch(written)
    named = tmp_path / how
    assert locate_run(named) == (written.samples, written.summary, written.run)
    assert run_sample_log(named) == tmp_path / "folder" / "samples.jsonl"
    assert written.owner == tmp_path / "folder" and written.lock.name == ".ragjudge.lock"


@pytest.mark.parametrize("how", ["judged.jsonl", "judged.samples.jsonl", "judged"])
def test_a_results_file_is_found_by_its_name_its_sample_log_or_the_name_given_to_out(tmp_path: Path,
                                                                                   how: str) -> None:
    written = OutputPaths.beside(tmp_path / "judged.jsonl")
    touch(written)
    assert [p.name for p in (written.samples, written.summary, written.run, written.csv, written.lock)] == \
        ["judged.samples.jsonl", "judged.summary.json", "judged.run.json", "judged.csv", "judged.lock"]
    assert written.owner == tmp_path / "judged.jsonl"
    assert locate_run(tmp_path / how) == (written.samples, written.summary, written.run)
    assert samples_file(tmp_path / "judged.jsonl") == written.samples


def test_results_jsonl_given_to_out_makes_a_run_folder(tmp_path: Path) -> None:
    assert OutputPaths.beside(tmp_path / "results.jsonl") == OutputPaths.in_folder(tmp_path)
    assert OutputPaths.in_folder(tmp_path).artifact("run.trec") == tmp_path / "run.trec"
    assert OutputPaths.beside(tmp_path / "x.jsonl").artifact("run.trec") == tmp_path / "x.run.trec"
