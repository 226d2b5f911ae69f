"""DialSim memories: what the agent has heard when a question comes, once; indexed once, never per utterance;
oracle sessions in the order they happened."""

from __future__ import annotations

from collections.abc import Sequence

from dialsim_helpers import MINI_DIR

from ragjudge.bench.dialsim import layouts
from ragjudge.bench.dialsim.memory import NO_EVIDENCE, ShowMemory
from ragjudge.bench.dialsim.plan import PlannedQuestion, plan_show
from ragjudge.bench.dialsim.script import load_show_infos
from ragjudge.bench.dialsim.searchers import BM25Searcher, retriever_spec
from ragjudge.bench.dialsim.timeline import Timeline
from ragjudge.bench.dialsim.tokens import token_counter


class CountingSearcher(BM25Searcher):
    def __init__(self) -> None:
        super().__init__(retriever_spec("bm25", []))
        self.indexed = 0
        self.searches = 0

    def index(self, texts: Sequence[str], bars=None) -> None:
        self.indexed += 1
        super().index(texts, bars)

    def search(self, query: str, n: int, k: int, extras: Sequence[str] = ()):
        self.searches += 1
        return super().search(query, n, k, extras)


def timeline() -> Timeline:
    data = layouts.read_show("mini", "json", MINI_DIR / "mini_dialsim.json")
    return Timeline.build(data, load_show_infos(MINI_DIR)["mini"], "generic")


def questions(t: Timeline) -> list[PlannedQuestion]:
    return [q for seed in range(4) for q in plan_show(t, seed)]


def heard(t: Timeline, q: PlannedQuestion) -> str:
    return t.history(t.sessions[q.session], q.ask_after + 1)


def test_session_memory_holds_each_session_once_and_the_current_one_as_heard() -> None:
    """The official simulator leaves a partial copy of the current session in memory at every utterance
    where it `continue`s, so one session fills the retrieved history many times over."""
    t = timeline()
    searcher = CountingSearcher()
    memory = ShowMemory("session", t, k=50, searcher=searcher)
    memory.build()
    for q in questions(t):
        recall = memory.recall(q)
        labels = [(item.session, item.label) for item in recall.items]
        assert len(labels) == len(set(labels))
        assert all(item.session <= q.session for item in recall.items)
        current = [item for item in recall.items if item.session == q.session]
        if current:
            assert current[0].body == heard(t, q)
            assert current[0].text.startswith(t.sessions[q.session].label + "\n")
    assert searcher.indexed == 1 and searcher.searches == len(questions(t))  # indexed once, never per utterance


def test_utterance_memory_stops_at_the_question() -> None:
    t = timeline()
    memory = ShowMemory("utterance", t, k=1000, searcher=CountingSearcher())
    memory.build()
    for q in questions(t):
        for item in memory.recall(q).items:
            number = int(item.label.rsplit("#", 1)[1].rstrip("]"))
            assert item.session < q.session or (item.session == q.session and number <= q.ask_after + 1)
            assert item.text == f"{item.label} {item.body}" and ", Utterance #" in item.label


def test_recent_memory_keeps_the_newest_sessions_that_fit() -> None:
    t = timeline()
    count = token_counter()
    budget = 1100
    memory = ShowMemory("recent", t, k=0, token_budget=budget, count_tokens=count)
    memory.build()
    q = max(questions(t), key=lambda q: q.session)
    recall = memory.recall(q)
    sessions = [item.session for item in recall.items]
    assert sessions == sorted(sessions) and sessions[-1] == q.session  # date order, ending with the current one
    assert sessions == list(range(sessions[0], q.session + 1))  # the newest ones, without gaps
    assert sum(count(i.text) for i in recall.items) <= budget - 500
    older = t.sessions[sessions[0] - 1]
    assert sum(count(i.text) for i in recall.items) + count(memory.items[older.index].text) > budget - 500


def test_oracle_sessions_come_in_the_order_they_happened() -> None:
    """The official oracle sorts its sessions by the label text, so April comes before March."""
    t = timeline()
    memory = ShowMemory("oracle", t, k=20)
    spanning = [q for q in questions(t) if q.evidence_sessions and
                len({t.sessions[i].date.split()[0] for i in q.evidence_sessions}) > 1]
    assert spanning
    differs = 0
    for q in spanning:
        recall = memory.recall(q)
        order = [item.session for item in recall.items]
        assert order == sorted(order) == sorted(q.evidence_sessions or [])
        official = sorted(order, key=lambda i: t.sessions[i].label)  # by label text: April before March
        differs += official != order
    assert differs
    empty = next(q for q in questions(t) if q.evidence_sessions == [])
    assert memory.recall(empty).block() == NO_EVIDENCE


def test_oracle_keeps_the_k_best_evidence_sessions() -> None:
    t = timeline()
    q = max((q for q in questions(t) if q.evidence_sessions), key=lambda q: len(q.evidence_sessions or []))
    assert len(q.evidence_sessions or []) >= 2
    recall = ShowMemory("oracle", t, k=1).recall(q)
    assert len(recall.items) == 1 and recall.items[0].session in (q.evidence_sessions or [])
