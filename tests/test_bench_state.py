"""Run state is the run's, not the bench's: what `Bench.load` returns beside the samples (`Loaded`) reaches every
later hook as `ctx.data` and is closed after the run; a bench instance runs twice alike; and the conformance kit's
`check_state` fails a bench that keeps a hook's work on `self`."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from test_conformance import CUSTOM, _support_faq_bench

from ragjudge.engine.bench import Bench, BenchOptions, EachSolver, Loaded, SampleResult
from ragjudge.engine.context import EngineOptions, RunContext
from ragjudge.engine.runner import run
from ragjudge.engine.summary import Summary
from ragjudge.formats.jsonl import read_models
from ragjudge.formats.samples import Sample
from ragjudge.testing.conformance import BenchCase, Conformance
from ragjudge.testing.conformance.runs import attributes, changes


class Words:
    """Side data a run opens (an index, say): the engine closes it after the run."""

    def __init__(self, words: dict[str, str]):
        self.words = words
        self.closed = False

    def close(self) -> None:
        self.closed = True


class Echo(EachSolver[str]):
    def __init__(self, words: Words):
        self.words = words

    def key(self, sample: str) -> str:
        return sample

    def fingerprint(self, sample: str) -> str:
        return "echo"

    async def solve_one(self, sample: str, ctx: RunContext) -> dict[str, Any]:
        return {"text": self.words.words[sample]}


class Lookup(Bench[BenchOptions, str]):
    name = "lookup-words"
    Options = BenchOptions

    def __init__(self, options: BenchOptions, words: dict[str, str]):
        super().__init__(options)
        self.words = words
        self.seen: list[tuple[str, Any]] = []
        """For the test: which hook saw which `ctx.data` (filled in place, the same list throughout)."""

    def sample_id(self, sample: str) -> str:
        return sample

    def load(self) -> Loaded[str, Words]:
        return Loaded(sorted(self.words), Words(dict(self.words)))

    def solver(self, ctx: RunContext) -> Echo:
        self.seen.append(("solver", ctx.data))
        return Echo(ctx.data)

    def summarize(self, results: Sequence[SampleResult[str]], ctx: RunContext) -> Summary:
        self.seen.append(("summarize", ctx.data))
        return super().summarize(results, ctx)

    def sample(self, result: SampleResult[str], ctx: RunContext) -> Sample:
        self.seen.append(("sample", ctx.data))
        return Sample(id=result.sample, input=result.sample, output=result.output["text"])

    def run_info(self, ctx: RunContext) -> dict[str, Any]:
        self.seen.append(("run_info", ctx.data))
        return {"words": len(ctx.data.words)}


def test_loaded_data_reaches_every_hook_and_is_closed_after_the_run() -> None:
    bench = Lookup(BenchOptions(), {"a": "alpha", "b": "beta"})
    outcomes = [run(bench, EngineOptions(show_progress=False), None) for _ in range(2)]
    assert [s.output for s in outcomes[0].samples] == ["alpha", "beta"] == [s.output for s in outcomes[1].samples]
    assert outcomes[0].run_info["words"] == 2 and outcomes[0].run_info["n_samples"] == 2
    first, second = bench.seen[:5], bench.seen[5:]
    assert [hook for hook, _ in first] == ["solver", "summarize", "sample", "sample", "run_info"]
    assert [hook for hook, _ in second] == [hook for hook, _ in first]
    assert len({id(data) for _, data in first}) == 1 and len({id(data) for _, data in second}) == 1
    assert first[0][1] is not second[0][1]  # each run loads its own
    assert first[0][1].closed and second[0][1].closed


def test_a_plain_list_from_load_leaves_ctx_data_none() -> None:
    class Plain(Lookup):
        def load(self) -> list[str]:  # type: ignore[override]
            return ["a"]

        def solver(self, ctx: RunContext) -> Echo:
            self.seen.append(("solver", ctx.data))
            return Echo(Words(self.words))

        def run_info(self, ctx: RunContext) -> dict[str, Any]:
            return {}

    bench = Plain(BenchOptions(), {"a": "alpha"})
    assert run(bench, EngineOptions(show_progress=False), None).samples[0].output == "alpha"
    assert [data for _, data in bench.seen] == [None, None, None]


def test_attribute_changes_are_named() -> None:
    class Thing:
        def __init__(self) -> None:
            self.keep, self.fill, self.swap, self.gone = 1, [], {"a": 1}, 0

    thing = Thing()
    before = attributes(thing)
    thing.fill.append(1)
    thing.swap = {"a": 1}
    del thing.gone
    thing.new = 2  # type: ignore[attr-defined]
    assert changes(before, attributes(thing)) == ["self.new (set)", "self.gone (deleted)",
                                                  "self.fill (filled or emptied)", "self.swap (replaced)"]
    assert changes(before, before) == []


SupportFaq = _support_faq_bench()
faq_module = sys.modules[SupportFaq.__module__]


class StatefulFaq(SupportFaq):  # type: ignore[misc, valid-type]
    """The example plugin as it was written before `Loaded`: `load` keeps the FAQ on `self` for the solver."""

    name = "support-faq-stateful"

    def load(self) -> list[Any]:
        folder = Path(self.options.data)
        self.faq = read_models(folder / "faq.jsonl", faq_module.Entry)
        return read_models(folder / "questions.jsonl", faq_module.Question)

    def solver(self, ctx: RunContext) -> Any:
        return faq_module.Answerer(self.options.gen, self.faq, None)


def test_check_state_fails_a_bench_that_keeps_run_state_on_self(tmp_path: Path) -> None:
    with Conformance(BenchCase(StatefulFaq, CUSTOM, systems=[["--gen", "lookup"]]), tmp_path) as kit:
        report = kit.check_state()
    assert report.passed == [] and len(report.problems) == 1
    assert "the run changed the bench instance: self.faq (set)" in report.problems[0]
    with pytest.raises(AssertionError, match="self.faq"):
        report.assert_ok()


def test_check_state_passes_the_example_plugin(tmp_path: Path) -> None:
    with Conformance(BenchCase(SupportFaq, CUSTOM, systems=[["--gen", "lookup"]]), tmp_path) as kit:
        report = kit.check_state().assert_ok(allow_skip=False)
    assert len(report.passed) == 1 and report.passed[0].startswith("system 0 (`eval --bench support-faq ")
