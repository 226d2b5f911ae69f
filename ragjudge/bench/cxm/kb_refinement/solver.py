"""The system under test: the paper's embedding baseline, with contradictory pairs from an LLM pair judge, or a
predictions file's pairs. The KB is embedded once per run (`embed`); embeddings and cost go to `ctx.facts["kb"]`,
where the summary reads them (the baseline's analysis, the encoder's truncation)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ragjudge.bench.cxm import metrics as M
from ragjudge.bench.cxm import prompts as P
from ragjudge.bench.cxm.kb_refinement.data import WholeKb
from ragjudge.bench.cxm.kb_refinement.scorers import Candidates
from ragjudge.bench.cxm.models import Article
from ragjudge.bench.cxm.retrieve import encoder_truncation
from ragjudge.bench.cxm.solver import FileRowsSolver, complete
from ragjudge.engine.bench import Record, Solver, fingerprint
from ragjudge.engine.parallel import each_as_completed
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway

if TYPE_CHECKING:
    from ragjudge.engine.context import RunContext

KB = "kb"
"""The key of `ctx.facts` that holds the run's `Embedded` KB."""


@dataclass(frozen=True)
class Embedding:
    """How the KB is embedded: the model, through sentence-transformers or an embeddings API (litellm)."""

    model: str
    encoder: str = "sentence-transformers"


@dataclass(frozen=True)
class Baseline:
    """The baseline's settings: each article's `k` nearest neighbours at cosine similarity >= `threshold` are similar;
    with a `judge` model, the pairs among each article's `judge_k` nearest neighbours it finds contradictory are."""

    threshold: float
    k: int
    judge: str | None = None
    judge_k: int | None = None


@dataclass
class Embedded:
    """The KB's unit-length article embeddings (title and text), in article order, and what they cost."""

    ids: list[str]
    vectors: np.ndarray
    from_store: int
    """Article texts read from the embedding store (a second score of the same KB encodes none)."""
    encoded: int
    truncated: list[dict[str, Any]] = field(default_factory=list)
    """Per local encoder: the articles longer than it reads (`retrieve.encoder_truncation`)."""
    _candidates: dict[int, Candidates] = field(default_factory=dict)

    def candidates(self, k: int, ctx: RunContext | None = None) -> Candidates:
        """Each article's k nearest neighbours as unordered pairs, by descending similarity (computed once per k)."""
        if k not in self._candidates:
            advance = ctx.bars.bar(f"nearest neighbours (k={k})", total=len(self.vectors)) if ctx else None
            first, second, sim = M.nearest_pairs(self.vectors, k, on_progress=advance)
            self._candidates[k] = Candidates(list(self.ids), first, second, sim)
        return self._candidates[k]


async def embed(articles: dict[str, Article], embedding: Embedding, ctx: RunContext) -> Embedded:
    """The run's article embeddings, with progress; kept in `ctx.facts["kb"]` (once per run)."""
    if (done := ctx.facts.get(KB)) is not None:
        return done
    texts = [a.full_text for a in articles.values()]
    advance = ctx.bars.bar(f"embed articles ({embedding.model})", total=len(texts))
    truncated: list[dict[str, Any]] = []
    if embedding.encoder == "litellm":
        from ragjudge.retrieval.encoders import LiteLLMEncoder

        encoder: Any = LiteLLMEncoder(embedding.model, gateway=ctx.require_gateway())
        vectors = await encoder.aencode(texts, advance)
    else:
        from ragjudge.retrieval.encoders import SentenceTransformerEncoder

        encoder = SentenceTransformerEncoder(embedding.model)
        vectors = await asyncio.to_thread(encoder.encode, texts, advance)
        truncated = encoder_truncation(encoder, texts)
    distinct = len(set(texts))
    ctx.facts[KB] = Embedded(list(articles), vectors, distinct - encoder.encoded, encoder.encoded, truncated)
    return ctx.facts[KB]


async def judge_contradiction(gateway: LLMGateway, a: Article, b: Article, judge_model: str,
                              spec: JudgeSpec) -> dict[str, Any]:
    """{"contradictory": bool} for one article pair, or {"error", "raw"} when the call fails or has no verdict."""
    variables = {"a": {"id": a.id, "text": a.full_text}, "b": {"id": b.id, "text": b.full_text}}
    response = await complete(gateway, judge_model, P.messages(spec, variables), spec.params)
    if isinstance(response, str):
        return {"error": response}
    parsed = P.parse_choice(response.text, spec)
    if parsed.error:
        return {"error": parsed.error, "raw": response.text[:1000]}
    return {"contradictory": bool(parsed.value)}


class KbFileSolver(FileRowsSolver):
    """A system's pairs from a file; embeds the KB first when the baseline analysis is asked for."""

    def __init__(self, articles: dict[str, Article] | None, embedding: Embedding | None):
        self.articles = articles
        self.embedding = embedding

    async def prepare(self, samples: Sequence[Any], ctx: RunContext) -> None:
        if self.embedding is not None and self.articles is not None:
            await embed(self.articles, self.embedding, ctx)


class BaselineSolver(Solver[WholeKb]):
    """Similar pairs by embeddings and a fixed threshold; contradictory pairs by the LLM pair judge, if any."""

    def __init__(self, articles: dict[str, Article], embedding: Embedding, baseline: Baseline, book: P.PromptBook):
        self.articles = articles
        self.embedding = embedding
        self.baseline = baseline
        self.name = embedding.model
        self.judge = book.spec(P.CONTRADICTION) if baseline.judge else None
        self.journaled = self.judge is not None  # LLM verdicts are kept; the embedding part is cheap to redo
        self.kb = fingerprint([(a.id, a.full_text) for a in articles.values()])
        """The KB's content: a changed KB is judged again (its one sample, `WholeKb`, is the same)."""

    async def prepare(self, samples: Sequence[WholeKb], ctx: RunContext) -> None:
        await embed(self.articles, self.embedding, ctx)

    def fingerprint(self, sample: WholeKb) -> str:
        b = self.baseline
        judge = P.fingerprint_of(self.judge, [b.judge], b.judge_k) if self.judge else None
        return P.fingerprint_of(None, self.embedding.model, self.embedding.encoder, b.threshold, b.k, judge, self.kb)

    async def _contradictions(self, kb: Embedded, ctx: RunContext) -> tuple[list[Record], list[Record]]:
        assert self.judge is not None
        judge, b = self.judge, self.baseline
        assert b.judge is not None
        cand = kb.candidates(b.judge_k or b.k, ctx)
        pairs = list(zip(cand.first.tolist(), cand.second.tolist()))
        model = b.judge
        advance = ctx.bars.bar(f"contradiction judge ({model})", total=len(pairs))
        rows, failures = [], []
        articles = [self.articles[i] for i in cand.ids]
        async for (i, j), verdict in each_as_completed(pairs, lambda p: judge_contradiction(
                ctx.require_gateway(), articles[p[0]], articles[p[1]], model, judge)):
            advance(1)
            pair = sorted((cand.ids[i], cand.ids[j]))
            if verdict.get("error"):
                failures.append({"pair": pair, **verdict})
            elif verdict["contradictory"]:
                rows.append({"kind": "contradictory", "pair": pair, "judge_model": model})
        return sorted(rows, key=lambda r: r["pair"]), sorted(failures, key=lambda r: r["pair"])

    async def solve(self, samples: Sequence[WholeKb], ctx: RunContext) -> AsyncIterator[tuple[str, Record]]:
        kb = await embed(self.articles, self.embedding, ctx)
        b = self.baseline
        rows: list[Record] = [{"kind": "similar", "pair": sorted(p), "threshold": b.threshold}
                              for p in kb.candidates(b.k, ctx).pairs(b.threshold)]
        rows.sort(key=lambda r: r["pair"])
        failures: list[Record] = []
        if self.judge is not None:
            found, failures = await self._contradictions(kb, ctx)
            rows += found
        for sample in samples:
            yield sample.id, {"rows": rows, "judge_failures": failures}
