"""What the agent remembers when a question comes: the paper's memory strategies (§5.2, Appendix G.2; the options:
docs/benches/dialsim.md#options). `recent` leaves 500 tokens of the budget free and lists oldest first, as the
official simulator; retrieval queries are `"{asker}: {question}"`; the oracle's evidence sessions come in date order.

Memory holds every earlier session plus the current one up to the question's utterance, once (the official code's
copies at every `continue` are a defect fixed: docs/benches/dialsim.md). Items carry the official labels (`[Date:
September 22, 1994, Session #1]`, `, Utterance #3`); summaries exist for finished sessions only, as officially.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragjudge.bench.dialsim.plan import PlannedQuestion
from ragjudge.bench.dialsim.searchers import DenseSearcher, PrefixSearcher, build_searcher
from ragjudge.bench.dialsim.timeline import Session, Timeline
from ragjudge.bench.dialsim.tokens import token_counter
from ragjudge.errors import RagjudgeError
from ragjudge.progress import ProgressBars
from ragjudge.retrieval.prefix_bm25 import PrefixBM25
from ragjudge.retrieval.spec import PipelineSpec

MemoryKind = Literal["recent", "utterance", "session", "summary", "oracle"]
DEFAULT_K = {"utterance": 20, "session": 10, "summary": 15, "oracle": 20}
"""Top-k per the paper (Appendix G.2) and the official simulator (oracle: 20 sessions)."""
CONTEXT_RESERVE = 500
DEFAULT_CONTEXT = 16000
"""memory=recent: the context window of a model litellm does not know (and of the offline agents)."""
NO_HISTORY = "No history.\n"
NO_EVIDENCE = "No Relevant History\n"


class MemoryUnavailable(RagjudgeError):
    """The memory a question needs could not be built (a session summary failed)."""


@dataclass(frozen=True)
class MemoryItem:
    session: int
    label: str
    text: str
    """As stored and shown to the agent (label included)."""
    body: str
    """Without the label: what the lexical agent reads."""


@dataclass
class Recall:
    items: list[MemoryItem]
    ranked: bool
    """True: best first (retrieval); False: in date order."""
    scores: list[float] | None = None
    empty: str = NO_HISTORY

    def block(self) -> str:
        """The prompt's dialog history: each item followed by a newline, as the official prompt builds it."""
        return "".join(item.text + "\n" for item in self.items) or self.empty

    def record(self) -> list[str]:
        return [item.label for item in self.items]

    def sessions(self) -> list[int]:
        """The session each item comes from: what the sample log matches against the evidence sessions."""
        return [item.session for item in self.items]


def utterance_items(timeline: Timeline) -> tuple[list[MemoryItem], list[int]]:
    """Every utterance of the show in order, and where each session's utterances start."""
    items: list[MemoryItem] = []
    starts: list[int] = []
    for s in timeline.sessions:
        starts.append(len(items))
        for i in range(len(s.utterances)):
            text = timeline.utterance_text(s, i)
            label = f"[Date: {s.date}, Session #{s.number}, Utterance #{i + 1}]"
            items.append(MemoryItem(s.index, label, f"{label} {text}", text))
    starts.append(len(items))
    return items, starts


def session_item(timeline: Timeline, session: Session, upto: int | None = None) -> MemoryItem:
    body = timeline.history(session, upto)
    return MemoryItem(session.index, session.label, f"{session.label}\n{body}", body)


def summary_item(session: Session, summary: str) -> MemoryItem:
    return MemoryItem(session.index, session.label, f"{session.label}\n{summary}\n", summary)


@dataclass
class ShowMemory:
    """One show's memory of one kind. Items are built (and indexed) once; each question sees a prefix."""

    kind: MemoryKind
    timeline: Timeline
    k: int
    searcher: PrefixSearcher | None = None
    token_budget: int = 0
    count_tokens: Callable[[str], int] | None = None
    summaries: dict[int, str | Exception] = field(default_factory=dict)
    items: list[MemoryItem] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)
    _tokens: dict[str, int] = field(default_factory=dict)

    def build(self, bars: ProgressBars | None = None, upto_session: int | None = None) -> None:
        t = self.timeline
        last = len(t.sessions) if upto_session is None else min(len(t.sessions), upto_session)
        if self.kind == "utterance":
            self.items, self.starts = utterance_items(t)
        elif self.kind in ("session", "recent"):
            self.items = [session_item(t, s) for s in t.sessions]
        elif self.kind == "summary":
            done = {i: text for i, text in self.summaries.items() if isinstance(text, str)}  # a failed one is empty
            self.items = [summary_item(s, done.get(s.index, "")) for s in t.sessions[:last]]
        if self.searcher is not None and self.kind in ("utterance", "session", "summary"):
            self.searcher.index([item.text for item in self.items], bars)

    def recall(self, q: PlannedQuestion) -> Recall:
        session = self.timeline.sessions[q.session]
        heard = q.ask_after + 1
        if self.kind == "oracle":
            return self._oracle(q, session, heard)
        if self.kind == "utterance":
            return self._retrieve(q, self.starts[session.index] + heard, [])
        if self.kind == "summary":
            failed = {i: e for i, e in self.summaries.items() if i < session.index and isinstance(e, Exception)}
            if failed:
                first = min(failed)
                raise MemoryUnavailable(f"the summary of session {first} failed ({failed[first]}); rerun to retry")
            return self._retrieve(q, session.index, [summary_item(session, self.timeline.history(session, heard))])
        current = session_item(self.timeline, session, heard)
        if self.kind == "recent":
            return self._recent(session, current)
        return self._retrieve(q, session.index, [current])

    def _retrieve(self, q: PlannedQuestion, n: int, extras: list[MemoryItem]) -> Recall:
        assert self.searcher is not None
        hits = self.searcher.search(f"{q.asker}: {q.question}", n, self.k, [e.text for e in extras])
        items = [self.items[r] if r < n else extras[r - n] for r, _ in hits]
        return Recall(items, ranked=True, scores=[round(s, 6) for _, s in hits])

    def _recent(self, session: Session, current: MemoryItem) -> Recall:
        chosen: list[MemoryItem] = []
        total = 0
        for item in [current, *reversed(self.items[: session.index])]:
            total += self._count(item)
            if total > self.token_budget - CONTEXT_RESERVE:
                break
            chosen.append(item)
        return Recall(list(reversed(chosen)), ranked=False)

    def _count(self, item: MemoryItem) -> int:
        if item.text not in self._tokens:
            assert self.count_tokens is not None
            self._tokens[item.text] = self.count_tokens(item.text)
        return self._tokens[item.text]

    def _oracle(self, q: PlannedQuestion, session: Session, heard: int) -> Recall:
        t = self.timeline
        evidence = [session_item(t, t.sessions[i], heard if i == session.index else None)
                    for i in q.evidence_sessions or []]
        if not evidence:
            return Recall([], ranked=False, empty=NO_EVIDENCE)
        ranker = PrefixBM25()  # the official oracle keeps the k evidence sessions BM25 ranks highest
        ranker.index([e.text for e in evidence])
        ranked = [r for r, _ in ranker.search(q.question, len(evidence), len(evidence))]
        ranked += [r for r in range(len(evidence)) if r not in set(ranked)]
        return Recall([evidence[r] for r in sorted(ranked[: self.k])], ranked=False)


def context_budget(gen: str, context_tokens: int | None, offline: bool) -> int:
    """memory=recent: the agent's context window in tokens: -T context_tokens, else litellm's figure for the model
    (the paper's Base LLM fills the model's whole window), else DEFAULT_CONTEXT."""
    if context_tokens:
        return context_tokens
    if not offline:
        from ragjudge.llm._litellm import litellm

        try:
            found = litellm().get_model_info(gen).get("max_input_tokens")
        except Exception:  # noqa: BLE001 - litellm raises a bare Exception for models it does not list
            found = None
        if found:
            return int(found)
    return DEFAULT_CONTEXT


def show_memories(kind: MemoryKind, timelines: dict[str, Timeline], k: int, spec: PipelineSpec | None, *,
                  token_budget: int = 0, index_dir: Path | None = None,
                  pipeline_dirs: list[str] | None = None) -> dict[str, ShowMemory]:
    """One memory per show, not yet built: retrieval memories get a searcher of `spec` each (dense ones share one
    encoder, so one model is in memory), `recent` counts tokens against `token_budget`."""
    counter = token_counter() if kind == "recent" else None
    memories: dict[str, ShowMemory] = {}
    shared: Any = None
    for show, timeline in timelines.items():
        searcher = build_searcher(spec, index_dir, pipeline_dirs or []) if spec is not None else None
        if isinstance(searcher, DenseSearcher):
            if shared is None:
                shared = searcher.retriever.encoder
            searcher.retriever.encoder = shared
        memories[show] = ShowMemory(kind, timeline, k, searcher=searcher, token_budget=token_budget,
                                    count_tokens=counter)
    return memories
