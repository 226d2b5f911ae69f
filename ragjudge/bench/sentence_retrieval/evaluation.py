"""The run's evaluation by the paper's protocol (Section 5.1): per system, the setting picked on each validation half
and the test half's figures at it (`protocol.evaluate`), over the dialogues every system scored; the best system.

Tuning needs every dialogue's figures, so `summarize` (the first hook that sees all results) computes it, and each
dialogue's figures go to `ctx.facts[FIGURES]` for the sample log and results.csv: `sample` sees one result, and a
scorer cannot compute them (it sees neither other scorers' scores nor, when resumed, every dialogue).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragjudge.bench.sentence_retrieval import protocol
from ragjudge.bench.sentence_retrieval.data import Dialogue, Split
from ragjudge.bench.sentence_retrieval.metrics import METRICS
from ragjudge.engine.bench import SampleResult

FIGURES = "dialogue_figures"
"""The key of `dialogue_figures` among the run's facts (`RunContext.facts`)."""
DIALOGUE_METRICS = ("AP", "nDCG@5", "RR")
"""A dialogue's figures, whose means over dialogues are MAP, nDCG@5 and MRR."""


@dataclass(frozen=True)
class Protocol:
    """How the run is evaluated: its splits (None: every dialogue at once, `-T no_splits`) and the metric tuned on."""

    splits: list[Split] | None
    source: str | None
    """The splits file, named by an error."""
    tune_on: str


@dataclass
class Scored:
    """One system's per-dialogue scores over its grid, for the dialogues every system scored, and its outcome."""

    name: str
    settings: list[str]
    scores: np.ndarray
    """(settings, dialogues, metrics)."""
    outcome: protocol.SystemOutcome

    @property
    def modal_pick(self) -> int:
        """The setting picked on most validation halves (first in grid order on a tie)."""
        counts = np.bincount(self.outcome.picks, minlength=len(self.settings))
        return int(counts.argmax())

    def mean(self, metric: str) -> float | None:
        """The mean over the splits of the test halves' figures (None when no half holds a dialogue)."""
        value, _ = protocol.mean_std(self.outcome.test[:, METRICS.index(metric)])
        return None if np.isnan(value) else value


@dataclass
class Evaluation:
    ok: list[SampleResult[Dialogue]]
    """The dialogues every system scored, in the run's order."""
    excluded: int
    """Dialogues left out: the system or a scorer failed on them."""
    masks: protocol.SplitMasks
    scored: list[Scored]
    """Every system, in `--pipeline` order."""
    with_splits: bool

    @property
    def n_splits(self) -> int:
        return int(self.masks.test.shape[0]) if self.with_splits else 0

    @property
    def best(self) -> str:
        """The system with the highest MAP (test-half mean); the first in --pipeline order on a tie."""
        measured = [s for s in self.scored if s.mean("MAP") is not None] or self.scored[:1]
        return max(measured, key=lambda s: s.mean("MAP") or 0.0).name


def evaluate(results: Sequence[SampleResult[Dialogue]], systems: Sequence[str], plan: Protocol) -> Evaluation | None:
    """The protocol over the dialogues every system scored (None when there is none); `systems` in --pipeline order."""
    ok = [r for r in results if not r.errors]
    if not ok:
        return None
    ids = [r.sample.id for r in ok]
    masks = protocol.all_at_once(len(ok)) if plan.splits is None else \
        protocol.split_masks(plan.splits, ids, plan.source)
    types = np.array([r.sample.type for r in ok])
    tune = METRICS.index(plan.tune_on)
    scored = []
    for name in systems:
        scores = np.array([r.scores[name]["metrics"] for r in ok]).transpose(1, 0, 2)
        scored.append(Scored(name, list(ok[0].scores[name]["settings"]), scores,
                             protocol.evaluate(scores, masks, types, tune)))
    return Evaluation(ok, len(results) - len(ok), masks, scored, plan.splits is not None)


def dialogue_figures(evaluation: Evaluation) -> dict[str, dict[str, Any]]:
    """Per dialogue id: the best system, the test halves that hold the dialogue, and per system the setting picked
    most and the dialogue's figures at the picked settings over those halves (None when no test half holds it)."""
    halves = evaluation.masks.test.sum(axis=0)
    best = evaluation.best
    out = {}
    for i, r in enumerate(evaluation.ok):
        systems = {}
        for s in evaluation.scored:
            values = s.outcome.per_dialogue[i]
            tested = None if np.isnan(values[0]) else dict(zip(DIALOGUE_METRICS, values.tolist(), strict=True))
            systems[s.name] = {"pick": s.settings[s.modal_pick], "tested": tested}
        out[r.sample.id] = {"best": best, "test_halves": int(halves[i]), "systems": systems}
    return out

