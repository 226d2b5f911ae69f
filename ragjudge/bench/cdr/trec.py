"""The run folder's TREC files: `run.trec` (each query's conversation ranking) and `qrels.trec` (its relevant
conversations), which `ragjudge retrieval-eval run.trec --qrels qrels.trec` scores to the same figures under the same
names, and `categories.tsv` for its `--breakdown-file categories.tsv --by category`. `-T compare=` reads another
run's `run.trec`."""

from __future__ import annotations

from collections.abc import Sequence

from ragjudge.bench.cdr.data import CdrQuery
from ragjudge.bench.cdr.metrics import as_qrels, as_run
from ragjudge.bench.cdr.units import UnitSpec
from ragjudge.engine.bench import SampleResult, failed
from ragjudge.formats.runs import Run, qrels_lines, trec_run_lines


def conversation_run(results: Sequence[SampleResult[CdrQuery]], pipeline: str, spec: UnitSpec) -> Run:
    """The rankings of the queries that were searched, named `<pipeline>-<unit>`."""
    rankings = {r.sample.id: r.output.get("ranking", []) for r in results if not failed(r.output)}
    return as_run(rankings, name=f"{pipeline}-{spec.slug}")


def trec_files(results: Sequence[SampleResult[CdrQuery]], pipeline: str, spec: UnitSpec) -> dict[str, str]:
    run = conversation_run(results, pipeline, spec)
    files = {"run.trec": "".join(trec_run_lines(run, tag=run.name)),
             "qrels.trec": "".join(qrels_lines(as_qrels([r.sample for r in results]), fmt="trec"))}
    if any(r.sample.category for r in results):
        files["categories.tsv"] = "query_id\tcategory\n" + "".join(
            f"{r.sample.id}\t{r.sample.category}\n" for r in results if r.sample.category)
    return files
