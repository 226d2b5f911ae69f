"""Systems: a reranker spec made runnable. `rank` gives one ranking per grid setting (permutations of the candidate
positions, best first, ties in the initial ranker's order). Systems see candidate texts and queries, never labels.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragjudge.engine.bench import fingerprint
from ragjudge.bench.sentence_retrieval import lexical
from ragjudge.bench.sentence_retrieval.data import Dialogue
from ragjudge.bench.sentence_retrieval.neural import CrossEncoderScorer, DenseScorer
from ragjudge.bench.sentence_retrieval.queries import QueryConfig, QueryParts
from ragjudge.bench.sentence_retrieval.specs import RerankSpec, Setting
from ragjudge.bench.sentence_retrieval.text import Analyzer, CandidateTokens, candidate_text
from ragjudge.llm import LLMGateway

SCORING_VERSION = 1
"""Bump when a change to the scoring code changes rankings: journaled rankings are then recomputed."""

Queries = dict[str, QueryParts]
"""Query key -> parts, as the solver built them for one dialogue."""
Rankings = dict[str, np.ndarray]
"""Setting key -> permutation of candidate positions."""


class System:
    """One spec: its grid settings and how to rank with them."""

    def __init__(self, spec: RerankSpec, settings: list[Setting]):
        self.spec = spec
        self.name = spec.name
        self.settings = settings

    @property
    def setting_keys(self) -> list[str]:
        return [s.key for s in self.settings]

    def query_configs(self) -> list[QueryConfig]:
        return list({s.query.key(): s.query for s in self.settings}.values())

    def identity(self) -> dict[str, Any]:
        """Everything that changes this system's rankings (besides the dialogue and its queries)."""
        return {"spec": self.spec.record() | {"source": None}, "version": SCORING_VERSION,
                "settings": [(s.key, s.options.model_dump(mode="json"), s.query.key()) for s in self.settings]}

    def describe(self) -> dict[str, Any]:
        return {"reranker": self.spec.reranker.name, "description": self.spec.description,
                "settings": self.setting_keys, "queries": [q.key() for q in self.query_configs()],
                "options": self.settings[0].options.model_dump(mode="json", exclude=set(self.spec.grid)),
                "source": self.spec.source}

    async def rank(self, items: Sequence[tuple[Dialogue, Queries]]) -> list[Rankings]:
        raise NotImplementedError


class InitialSystem(System):
    def query_configs(self) -> list[QueryConfig]:
        return []  # the given order reads no query

    async def rank(self, items: Sequence[tuple[Dialogue, Queries]]) -> list[Rankings]:
        return [{s.key: np.arange(len(d.candidates)) for s in self.settings} for d, _ in items]


class LexicalSystem(System):
    """BM25 or the Dirichlet LM; every setting that shares a query is scored in one array operation."""

    def __init__(self, spec: RerankSpec, settings: list[Setting], tokens: CandidateTokens):
        super().__init__(spec, settings)
        self.tokens = tokens
        self.kind = spec.reranker.name

    def identity(self) -> dict[str, Any]:
        uses_pool = any(s.options.collection == "pool" for s in self.settings)
        return {**super().identity(), "pool": self.tokens.digest if uses_pool else None}

    def _scores(self, settings: list[Setting], tf: np.ndarray, lengths: np.ndarray, weights: np.ndarray,
                coll: lexical.Collection) -> np.ndarray:
        if self.kind == "bm25":
            by_method: dict[str, list[int]] = {}
            for i, s in enumerate(settings):
                by_method.setdefault(s.options.method, []).append(i)
            out = np.zeros((len(settings), len(lengths)))
            for method, rows in by_method.items():
                out[rows] = lexical.bm25_scores(tf, lengths, weights, coll, [settings[i].options.k1 for i in rows],
                                                [settings[i].options.b for i in rows], method)
            return out
        return lexical.lm_scores(tf, lengths, weights, coll, [s.options.mu for s in settings])

    def rank_one(self, dialogue: Dialogue, queries: Queries) -> Rankings:
        analyzer = self.tokens.analyzer
        docs = self.tokens.of(dialogue.id)
        out: Rankings = {}
        groups: dict[tuple[str, str], list[Setting]] = {}
        for s in self.settings:
            groups.setdefault((s.query.key(), s.options.collection), []).append(s)
        for (query_key, collection), settings in groups.items():
            parts = [(w, analyzer.ids(text)) for w, text in queries[query_key]]
            terms, weights = lexical.query_terms(parts)
            tf, lengths = lexical.term_matrix(docs, terms)
            coll = (lexical.pool_collection(self.tokens.pool, terms) if collection == "pool"
                    else lexical.dialogue_collection(tf, lengths))
            order = lexical.rank_order(self._scores(settings, tf, lengths, weights, coll))
            out.update({s.key: order[i] for i, s in enumerate(settings)})
        return out

    async def rank(self, items: Sequence[tuple[Dialogue, Queries]]) -> list[Rankings]:
        return [self.rank_one(d, q) for d, q in items]


class DenseSystem(System):
    def __init__(self, spec: RerankSpec, settings: list[Setting], gateway: LLMGateway | None,
                 encoders: dict[str, DenseScorer] | None = None):
        super().__init__(spec, settings)
        encoders = {} if encoders is None else encoders
        key = fingerprint(settings[0].options.model_dump(mode="json", exclude={"title"}))
        if key not in encoders:  # systems with the same encoder share it, and its vectors
            encoders[key] = DenseScorer(settings[0].options, gateway)
        self.scorer = encoders[key]

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "model": self.scorer.model_name}

    def describe(self) -> dict[str, Any]:
        device = self.scorer.device
        return {**super().describe(), **({"device": device} if device else {})}

    async def rank(self, items: Sequence[tuple[Dialogue, Queries]]) -> list[Rankings]:
        title = self.settings[0].options.title
        texts = []
        for d, queries in items:
            texts += [self.scorer.passage_text(candidate_text(c, title)) for c in d.candidates]
            texts += [self.scorer.query_text(t) for s in self.settings for _, t in queries[s.query.key()]]
        await self.scorer.encode(texts)
        out = []
        for d, queries in items:
            cands = [candidate_text(c, title) for c in d.candidates]
            out.append({s.key: lexical.rank_order(self.scorer.scores(queries[s.query.key()], cands))[0]
                        for s in self.settings})
        return out


class CrossEncoderSystem(System):
    def __init__(self, spec: RerankSpec, settings: list[Setting]):
        super().__init__(spec, settings)
        self.scorer = CrossEncoderScorer(settings[0].options)

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "model": self.scorer.model_name}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "device": self.scorer.device}

    async def rank(self, items: Sequence[tuple[Dialogue, Queries]]) -> list[Rankings]:
        title = self.settings[0].options.title
        jobs = [(i, s, d, q) for i, (d, q) in enumerate(items) for s in self.settings]
        scores = await self.scorer.scores_many([q[s.query.key()] for _, s, _, q in jobs],
                                               [[candidate_text(c, title) for c in d.candidates]
                                                for _, _, d, _ in jobs])
        out: list[Rankings] = [{} for _ in items]
        for (i, s, _, _), sc in zip(jobs, scores, strict=True):
            out[i][s.key] = lexical.rank_order(sc)[0]
        return out


@dataclass
class RankingMemo:
    """Rankings computed during this run, by (system, dialogue): fusion reuses its members' rankings."""

    rankings: dict[tuple[str, str], Rankings] = field(default_factory=dict)

    async def get(self, system: System, items: Sequence[tuple[Dialogue, Queries]]) -> list[Rankings]:
        todo = [(d, q) for d, q in items if (system.name, d.id) not in self.rankings]
        if todo:
            for (d, _), r in zip(todo, await system.rank(todo), strict=True):
                self.rankings[system.name, d.id] = r
        return [self.rankings[system.name, d.id] for d, _ in items]


def rrf_fuse(orders: Sequence[np.ndarray], weights: Sequence[float], rrf_k: int) -> np.ndarray:
    """Reciprocal rank fusion (Cormack et al., 2009) of permutations: sum_m w_m / (rrf_k + rank_m); ties keep
    the initial ranker's order."""
    n = len(orders[0])
    score = np.zeros(n)
    for order, weight in zip(orders, weights, strict=True):
        ranks = np.empty(n)
        ranks[order] = np.arange(1, n + 1)
        score += weight / (rrf_k + ranks)
    return lexical.rank_order(score)[0]


class RRFSystem(System):
    """Fuses its members' rankings; the grid is every combination of the members' settings and its own."""

    def __init__(self, spec: RerankSpec, settings: list[Setting], members: list[System], memo: RankingMemo):
        self.members = members
        self.memo = memo
        self.own = settings
        combos = []
        for member_keys in itertools.product(*(m.setting_keys for m in members)):
            for s in settings:
                label = ",".join(f"{m.name}({k})" for m, k in zip(members, member_keys, strict=True)
                                 if len(m.settings) > 1)
                own = s.key if len(settings) > 1 else ""
                combos.append((member_keys, s, ",".join(p for p in (label, own) if p) or "default"))
        self.combos = combos
        super().__init__(spec, [s.model_copy(update={"key": key}) for _, s, key in combos])

    def query_configs(self) -> list[QueryConfig]:
        return list({q.key(): q for m in self.members for q in m.query_configs()}.values())

    def identity(self) -> dict[str, Any]:
        return {**super().identity(), "members": [m.identity() for m in self.members]}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "members": [m.name for m in self.members]}

    async def rank(self, items: Sequence[tuple[Dialogue, Queries]]) -> list[Rankings]:
        per_member = [await self.memo.get(m, items) for m in self.members]
        out = []
        for i in range(len(items)):
            fused = {}
            for member_keys, s, key in self.combos:
                orders = [per_member[j][i][k] for j, k in enumerate(member_keys)]
                weights = s.options.weights or [1.0] * len(orders)
                fused[key] = rrf_fuse(orders, weights, s.options.rrf_k)
            out.append(fused)
        return out


def system_fingerprint(system: System, queries: Queries) -> str:
    used = sorted({q.key() for q in system.query_configs()})
    return fingerprint(system.identity(), {k: queries.get(k) for k in used})


def tokens_for(dialogues: Sequence[Dialogue], options: Any, cache: dict[str, CandidateTokens]) -> CandidateTokens:
    """Candidates analysed once per distinct analyser configuration (shared by the systems that use it)."""
    config = {k: options.model_dump(mode="json")[k] for k in ("stemmer", "stopwords", "candidate_stopwords",
                                                              "title")}
    key = fingerprint(config)
    if key not in cache:
        analyzer = Analyzer(options.stemmer, options.stopwords)
        cache[key] = CandidateTokens(dialogues, analyzer, keep_stopwords=not options.candidate_stopwords,
                                     with_title=options.title)
    return cache[key]
