"""What a test gets back: `RagJudge` (the `rag_judge` fixture) and `RagResult` (one judged turn).

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ragjudge.formats.samples import Score
from ragjudge.models import Passage, Task
from ragjudge.pytest_plugin.inputs import TurnInput, build_turn

if TYPE_CHECKING:
    from ragjudge.pytest_plugin.config import Settings
    from ragjudge.pytest_plugin.evaluator import Evaluator


class ResultSink(Protocol):
    """Where a checked turn is recorded for the JSON report (`ragjudge.pytest_plugin.report.Recorder`)."""

    def add(self, test: str | None, result: RagResult) -> None: ...


@dataclass
class Check:
    """One threshold an assertion helper compared a judge's score with."""

    assertion: str
    judge: str
    metric: str
    value: float | None
    threshold: float | None
    passed: bool | None
    """None: not checked (the judge could not run, see `note`)."""
    note: str = ""
    scale: tuple[float, float] | None = None
    """The scale the user gave the threshold on (a criterion's 1-5); `value` and `threshold` are 0-1 scores."""

    def on_scale(self, score: float) -> float:
        """A 0-1 score on the user's scale (`0.25` is `2` on 1-5); unchanged without one."""
        if self.scale is None:
            return score
        low, high = self.scale
        return round(low + score * (high - low), 6)

    def as_dict(self) -> dict[str, Any]:
        """The JSON report's check (`scale` only for a criterion's)."""
        return {k: v for k, v in vars(self).items() if k != "scale" or v is not None}


@dataclass
class RagResult:
    """One evaluated turn: each judge's Score (value, label, rationale, error, details)."""

    turn: TurnInput
    judgements: dict[str, Score]
    k: int
    owner: RagJudge | None = field(default=None, repr=False)
    checks: list[Check] = field(default_factory=list)

    # -- inputs ------------------------------------------------------------------------------
    @property
    def task(self) -> Task:
        return self.turn.task

    @property
    def question(self) -> str:
        return self.turn.task.question

    @property
    def answer(self) -> str:
        return self.turn.prediction.text

    @property
    def reference(self) -> str | None:
        return self.turn.task.reference

    @property
    def passages(self) -> list[Passage]:
        return self.turn.passages

    @property
    def retrieved_ids(self) -> list[str]:
        return self.turn.retrieved_ids

    @property
    def expected_passage_ids(self) -> list[str] | None:
        return self.turn.expected_passage_ids

    @property
    def answerability(self) -> str | None:
        return self.turn.answerability

    # -- outputs -----------------------------------------------------------------------------
    def __getitem__(self, judge: str) -> Score:
        return self.judgements[judge]

    def __contains__(self, judge: object) -> bool:
        return judge in self.judgements

    @property
    def scores(self) -> dict[str, float]:
        return {n: r.value for n, r in self.judgements.items() if r.value is not None}

    @property
    def rationales(self) -> dict[str, str]:
        return {n: r.rationale for n, r in self.judgements.items() if r.rationale}

    @property
    def errors(self) -> dict[str, str]:
        return {n: r.error for n, r in self.judgements.items() if r.error}

    @property
    def skipped(self) -> dict[str, str]:
        return {n: str(r.details["skipped"]) for n, r in self.judgements.items() if r.details.get("skipped")}

    def score(self, judge: str) -> float | None:
        result = self.judgements.get(judge)
        return None if result is None else result.value

    def recall_at(self, k: int) -> float | None:
        from ragjudge.pytest_plugin.recall import recall_at_k

        if self.expected_passage_ids is None:
            return None
        return recall_at_k(self.expected_passage_ids, self.retrieved_ids, k)

    def checks_ran(self) -> bool:
        """Whether any check of this result was decided (passed or failed), not deferred or not applicable."""
        return any(c.passed is not None for c in self.checks)

    def ensure(self, *judges: str) -> RagResult:
        """Run the named judges if this result does not have them yet (assertion helpers use this)."""
        missing = [j for j in judges if j not in self.judgements]
        if missing:
            if self.owner is None:
                raise RuntimeError(f"this result has no {', '.join(missing)} and no evaluator to run it")
            self.judgements.update(self.owner.evaluator.run(missing, self.turn, self.k))
        return self

    def __repr__(self) -> str:
        parts = [f"{name}={r.value:.3f}" if r.value is not None else f"{name}={'error' if r.error else 'skipped'}"
                 for name, r in self.judgements.items()]
        return f"RagResult({self.task.task_id!r}: {', '.join(parts)})"


class RagJudge:
    """The `rag_judge` fixture: evaluates turns of the app under test and records them for the report."""

    def __init__(self, evaluator: Evaluator, recorder: ResultSink | None = None, test: str | None = None,
                 pending_skips: list[str] | None = None):
        self.evaluator = evaluator
        self.recorder = recorder
        self.test = test
        self.pending_skips = pending_skips
        """Reasons a check could not run: the plugin skips the test at its end when no check ran, and reports them as
        skipped checks of a test that passes or fails on the checks that ran."""
        self.results: list[RagResult] = []
        """Every turn this test judged (the checks that ran are theirs)."""
        self._count = 0

    @property
    def settings(self) -> Settings:
        return self.evaluator.settings

    def _result(self, turn: TurnInput, judgements: dict[str, Score], k: int) -> RagResult:
        result = RagResult(turn=turn, judgements=judgements, k=k, owner=self)
        self.results.append(result)
        if self.recorder is not None:
            self.recorder.add(self.test, result)
        return result

    def evaluate(
        self,
        question: str | None = None,
        answer: str | None = None,
        *,
        conversation: Iterable[Any] | None = None,
        passages: Iterable[Any] | None = None,
        reference: str | None = None,
        expected_answerable: bool | None = None,
        answerability: str | None = None,
        expected_passage_ids: Iterable[str] | None = None,
        task: Task | None = None,
        judges: Iterable[str] | None = None,
        k: int | None = None,
    ) -> RagResult:
        """Judge one turn of the app under test.

        `conversation`: the turns before the question ({"speaker", "text"} or {"role", "content"} dicts);
        `passages`: what the app retrieved, best first (dicts with an id and text, Passage objects or
        strings); `reference`: a reference answer; `expected_answerable` (or MTRAG's `answerability`
        label): should the app answer or decline; `expected_passage_ids`: the passages it should
        retrieve; `task`: a dataset Task supplying all of these as defaults. `judges` (idk, idk_lexical,
        rb_alg, rb_llm, rl_f, recall, or any judge spec) defaults to every judge that applies to the
        inputs; an LLM judge without a configured model is recorded as skipped, never called. `k`:
        Recall@k's k (default: the session's, 5)."""
        turn, names, k = self._prepare(judges, k, question=question, answer=answer, conversation=conversation,
                                      passages=passages, reference=reference, expected_answerable=expected_answerable,
                                      answerability=answerability, expected_passage_ids=expected_passage_ids,
                                      task=task)
        return self._result(turn, self.evaluator.run(names, turn, k), k)

    async def aevaluate(self, question: str | None = None, answer: str | None = None, *,
                        judges: Iterable[str] | None = None, k: int | None = None, **inputs: Any) -> RagResult:
        """`evaluate` for async tests: the same arguments."""
        turn, names, k = self._prepare(judges, k, question=question, answer=answer, **inputs)
        return self._result(turn, await self.evaluator.arun(names, turn, k), k)

    def _prepare(self, judges: Iterable[str] | None, k: int | None, **inputs: Any
                 ) -> tuple[TurnInput, list[str], int]:
        if inputs["answer"] is None:
            raise TypeError("evaluate() needs answer=")
        if isinstance(judges, str) or not isinstance(judges, (list, tuple, type(None))):
            judges = [judges]  # type: ignore[list-item]
        k = self.settings.recall_k if k is None else int(k)
        if k < 1:
            raise ValueError(f"k must be 1 or more, got {k}")
        self._count += 1
        turn = build_turn(task_id=f"{self.test or 'turn'}#{self._count}", **inputs)
        names = [self.evaluator.name_of(j) for j in judges] if judges is not None else \
            self.evaluator.default_judges(turn)
        return turn, names, k
