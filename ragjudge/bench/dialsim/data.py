"""Loading a DialSim run's data: each show's timeline in any layout (`layouts.py`), the questions planned over them
(from seeds, or an earlier run's plan.jsonl), and whether the data allows the evidence-date rule (without oracle
dates every candidate is taken: docs/benches/dialsim.md, Evidence dates).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragjudge.bench.dialsim import layouts
from ragjudge.bench.dialsim.longdialqa import DATA_HELP
from ragjudge.bench.dialsim.memory import ShowMemory
from ragjudge.bench.dialsim.plan import PlannedQuestion, check_plan, plan_show, read_plan
from ragjudge.bench.dialsim.script import NamesMode, load_show_infos
from ragjudge.bench.dialsim.timeline import Timeline
from ragjudge.engine.bench import fingerprint
from ragjudge.errors import UsageError

DATA_ENV = "RAGJUDGE_DIALSIM_DATA"


def data_path(data: str | None) -> Path:
    """--data, else $RAGJUDGE_DIALSIM_DATA."""
    value = data or os.environ.get(DATA_ENV)
    if not value:
        raise UsageError(f"bench dialsim needs --data FOLDER (or ${DATA_ENV}). {DATA_HELP}")
    return Path(value)


@dataclass
class Simulation:
    """What a run plays: each show's timeline, the questions planned over them, a digest of the data (part of every
    answer's fingerprint), and each show's memory (made from the options at load, built when the solver prepares)."""

    timelines: dict[str, Timeline]
    plan: list[PlannedQuestion]
    digest: str
    memories: dict[str, ShowMemory] = field(default_factory=dict)

    @property
    def names(self) -> NamesMode | None:
        return next(iter(self.timelines.values())).names if self.timelines else None

    def evidence_rule(self) -> dict[str, bool]:
        """show -> whether the plan could apply the official evidence-date rule (it needs the oracle files' dates)."""
        lacking = {q.show for q in self.plan if q.evidence_sessions is None}
        return {show: t.source.oracle and show not in lacking for show, t in self.timelines.items()}

    def evidence_warnings(self) -> list[str]:
        out = []
        for show, applied in self.evidence_rule().items():
            if not applied:
                undated = sum(1 for q in self.plan if q.show == show and q.evidence_sessions is None)
                out.append(f"warning: {show}: no evidence dates (the oracle files {show}_oracle_tkg.pickle and "
                           f"{show}_oracle_fan.pickle are not beside the data), so the plan cannot skip questions "
                           f"whose evidence session has not happened yet, as the official simulator does: "
                           f"{undated} question(s) asked without that check (run.json: evidence_date_rule)")
        return out

    def notes(self) -> list[str]:
        """What loading left out."""
        return [f"{show}: {t.source.skipped_questions} question(s) with fewer than 5 options were skipped"
                for show, t in self.timelines.items() if t.source.skipped_questions]

    def sources(self) -> dict[str, Any]:
        """Where each show was read from (run.json's `data`)."""
        return {show: {"source": t.source.source, "layout": t.source.layout, "oracle": t.source.oracle,
                       "sessions": len(t.sessions), "agent": t.info.agent} for show, t in self.timelines.items()}

    def indexes(self) -> dict[str, Any] | None:
        """The dense memories' indexes (built or loaded from --index-dir), by show."""
        found = {show: m.searcher.describe()["index"] for show, m in self.memories.items()
                 if hasattr(m.searcher, "describe")}
        return found or None

    def close(self) -> None:
        for memory in self.memories.values():
            close = getattr(memory.searcher, "close", None)
            if close is not None:
                close()


def read_simulation(path: Path, *, shows: Sequence[str] | None, plan: Path | None, names: NamesMode | None,
                    seeds: Sequence[int], tkg_ratio: float) -> Simulation:
    """The shows in `path` (those named, those of a reused plan, or all), with `plan`'s questions or one plan per
    seed. A show missing from the data, or a plan that does not fit it, is one line."""
    found = layouts.find_shows(path)
    reused = read_plan(plan) if plan is not None else None
    wanted = list(shows or (dict.fromkeys(q.show for q in reused) if reused else found))
    missing = [s for s in wanted if s not in found]
    if missing:
        flag = "-T shows" if shows else f"-T plan={plan}"
        raise UsageError(f"{flag}: {', '.join(missing)} not in {path} (found: {', '.join(found)})")
    mode: NamesMode = names or (reused[0].names if reused else "generic")
    infos = load_show_infos(path if path.is_dir() else path.parent)
    timelines: dict[str, Timeline] = {}
    for show in wanted:
        if show not in infos:
            raise UsageError(f"show {show!r} is not one of {', '.join(infos)}: describe it (agent, names) in "
                             f"dialsim_shows.json beside the data")
        layout, source = found[show]
        timelines[show] = Timeline.build(layouts.read_show(show, layout, source), infos[show], mode)
    digest = fingerprint({show: [(x.episode, x.scene, x.date, x.script) for x in t.source.sessions]
                          for show, t in timelines.items()})
    if reused is not None:
        assert plan is not None
        check_plan(reused, timelines, plan)
        return Simulation(timelines, reused, digest)
    return Simulation(timelines, [q for show in wanted for seed in seeds
                                  for q in plan_show(timelines[show], seed, tkg_ratio)], digest)


def require_evidence_dates(simulation: Simulation) -> None:
    """memory=oracle shows the evidence sessions: every show needs its oracle files' dates."""
    unknown = sorted(show for show, applied in simulation.evidence_rule().items() if not applied)
    if unknown:
        raise UsageError(f"memory=oracle needs the evidence dates of the oracle pickles ({unknown[0]}_oracle_"
                         f"tkg.pickle, {unknown[0]}_oracle_fan.pickle) beside the data")
