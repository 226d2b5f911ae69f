"""Search CXMArena knowledge-base articles with a retrieval pipeline, whole or in chunks.

`-T chunk` and the encoder's truncation: docs/benches/cxmarena.md, Chunking and truncation. A name that is no
pipeline is a sentence-transformers model for dense retrieval. Each passage remembers its article in a table built
while splitting (ids are never parsed back); the search goes as deep as it takes to fill k distinct articles.
CXMArena's predictor instead takes the top-k passages and removes repeats (possibly fewer than k articles);
`chunk_articles` keeps what scoring that way needs. `KbIndex.truncation` counts passages the encoder cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from ragjudge.bench.cxm.models import Article
from ragjudge.errors import UsageError
from ragjudge.llm import LLMGateway
from ragjudge.models import Passage
from ragjudge.progress import ProgressBars
from ragjudge.retrieval.base import index_text
from ragjudge.retrieval.corpus import CHARACTERS, ChunkingSpec, chunk_documents
from ragjudge.retrieval.spec import PipelineSpec, RetrieverSpec, available_pipelines, load_pipeline

BUNDLED = ("minilm", "bundled", "embedding", "embeddings")
DEFAULT_OVERLAP = 100
"""CXMArena's predictor overlaps chunks by 100 characters."""


def resolve_embedding_model(name: str | None) -> str:
    """None and the bundled aliases → 'minilm' (the offline all-MiniLM-L6-v2); anything else as given."""
    return "minilm" if name is None or name.lower() in BUNDLED else name


def pipeline_for(name: str, extra_dirs: Sequence[str | Path] | None = None) -> PipelineSpec:
    """A pipeline by name or path; else a dense pipeline over that embedding model."""
    dirs = list(extra_dirs or [])
    is_path = name.endswith((".yaml", ".yml"))
    if is_path or name in available_pipelines(dirs):
        return load_pipeline(name, dirs)
    dense = RetrieverSpec(name="dense", options={"model": resolve_embedding_model(name)})
    return PipelineSpec(name=name, retriever=dense)


PIPELINE_CHUNKING = "pipeline"
CHUNK_HELP = ("How articles are split for retrieval: N = chunks of N characters (the paper's 500 / 1000, split as "
              "CXMArena's predictor splits them, overlap -T chunk_overlap); 0 = whole articles, never split; "
              "pipeline = the pipeline spec's own `chunking:` (whole articles when it has none).")
OVERLAP_HELP = "Characters shared by neighbouring chunks with -T chunk=N (default 100, as CXMArena's predictor)."


def parse_chunk(value: Any) -> Any:
    """The value of `-T chunk` as the options hold it (a number of characters or "pipeline"), with an error that
    says what is allowed."""
    if value is None or isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    text = str(value).strip().lower()
    if text == PIPELINE_CHUNKING:
        return PIPELINE_CHUNKING
    if text.isdigit():
        return int(text)
    raise ValueError(f"must be a whole number of characters >= 0 (0: whole articles) or 'pipeline' (the pipeline's "
                     f"own chunking), got {value!r}")


Chunk = Annotated[Annotated[int, Field(ge=0)] | Literal["pipeline"], BeforeValidator(parse_chunk)]
"""`-T chunk`: characters per chunk, 0 for whole articles, or `pipeline` for the pipeline spec's own chunking."""


def chunking_for(spec: PipelineSpec, chunk: int | str | None, overlap: int | None = None) -> ChunkingSpec | None:
    """`chunk` (characters, as the paper's 500 / 1000) overrides the spec's chunking; 0 means whole articles;
    "pipeline" (or None) the spec's own chunking. An overlap without chunks of characters to overlap is an error,
    not a setting silently ignored."""
    if chunk is None or chunk == PIPELINE_CHUNKING or chunk == 0:
        if overlap is not None:
            which = "0 (whole articles)" if chunk == 0 else "pipeline (the pipeline's own chunking)"
            raise UsageError(f"-T chunk_overlap applies to chunks of characters (-T chunk=N), not -T chunk={which}")
        return None if chunk == 0 else spec.chunking
    assert isinstance(chunk, int)
    overlap = DEFAULT_OVERLAP if overlap is None else overlap
    if overlap >= chunk:
        raise UsageError(f"-T chunk_overlap ({overlap}) must be smaller than -T chunk ({chunk})")
    return ChunkingSpec(size=chunk, overlap=overlap, tokenizer=CHARACTERS)


def describe_chunking(chunking: ChunkingSpec | None) -> str:
    if chunking is None:
        return "whole articles"
    unit = "characters" if chunking.tokenizer == CHARACTERS else f"{chunking.tokenizer} tokens"
    return f"chunks of {chunking.size} {unit} (overlap {chunking.overlap})"


def split_articles(articles: dict[str, Article], chunking: ChunkingSpec | None) -> tuple[list[Passage], dict[str, str]]:
    """The passages to index and the table passage id → article id."""
    documents = [Passage(id=a.id, text=a.text, title=a.title) for a in articles.values()]
    table: dict[str, str] = {}
    passages: list[Passage] = []
    for document in documents:
        pieces = list(chunk_documents([document], chunking)) if chunking else [document]
        for piece in pieces:
            if piece.document_id in table:
                raise UsageError(f"two passages are both named {piece.document_id!r} (articles "
                                 f"{table[piece.document_id]!r} and {document.document_id!r}): rename an article")
            table[piece.document_id] = document.document_id
            passages.append(piece)
    return passages, table


@dataclass
class SearchHits:
    """One query's results: distinct articles best first, and the articles of the top passages in order
    (with repeats), from which the official top-k-passages-then-dedupe ranking follows for any k."""

    ranking: list[str]
    chunk_articles: list[str] = field(default_factory=list)


def _encoders(retriever: Any) -> list[Any]:
    found = [retriever.encoder] if hasattr(retriever, "encoder") else []
    for member in getattr(retriever, "members", []) or []:
        found += _encoders(member)
    return found


def encoder_truncation(encoder: Any, texts: Sequence[str]) -> list[dict[str, Any]]:
    """How many texts exceed a local encoder's maximum input length (and so are cut when encoded)."""
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    if not isinstance(encoder, SentenceTransformerEncoder):
        return []  # embedding APIs refuse over-long input instead of cutting it
    limit = encoder.max_tokens
    if not limit:
        return []
    lengths = encoder.token_counts(texts)
    return [{"encoder": encoder.model_name, "max_tokens": limit, "passages": len(texts),
             "truncated": sum(n > limit for n in lengths), "longest": max(lengths, default=0)}]


def truncation(retriever: Any, passages: Sequence[Passage]) -> list[dict[str, Any]]:
    """Per local encoder of a retriever: how many passages it cuts."""
    options = getattr(retriever, "options", None)
    title, prefix = getattr(options, "title", True), getattr(options, "passage_prefix", "")
    texts = [prefix + index_text(p, title) for p in passages]
    return [t for encoder in _encoders(retriever) for t in encoder_truncation(encoder, texts)]


class KbIndex:
    """One pipeline's index over the KB articles (whole or chunked), searched for distinct articles."""

    def __init__(self, spec: PipelineSpec, articles: dict[str, Article], *, chunking: ChunkingSpec | None,
                 index_dir: str | Path | None = None, extra_dirs: Sequence[str | Path] | None = None,
                 gateway: LLMGateway | None = None):
        from ragjudge.retrieval.pipeline import Pipeline

        if spec.retriever.name == "elasticsearch" and chunking is not None:
            raise UsageError("chunking KB articles needs a local retriever (bm25, dense, hybrid), not elasticsearch")
        self.articles = articles
        self.chunking = chunking
        self.pipeline = Pipeline(spec.model_copy(update={"chunking": None}), extra_dirs=list(extra_dirs or []),
                                 index_dir=index_dir)
        for encoder in _encoders(self.pipeline.retriever):  # API embeddings go through the run's gateway (cache)
            if gateway is not None and hasattr(encoder, "gateway"):
                encoder.gateway = gateway
        self.passages, self.table = split_articles(articles, chunking)
        self.info: dict[str, Any] = {}

    def open(self, bars: ProgressBars | None = None) -> dict[str, Any]:
        info = self.pipeline.open_passages(self.passages, bars)
        self.info = {"spec": self.pipeline.spec.name, "retriever": self.pipeline.retriever.describe(),
                     "chunking": describe_chunking(self.chunking), "articles": len(self.articles),
                     "passages": len(self.passages), "index": info.as_dict(),
                     "truncation": truncation(self.pipeline.retriever, self.passages)}
        return self.info

    def search(self, queries: Sequence[str], k: int) -> list[SearchHits]:
        """Top-k distinct articles per query (fewer only when the KB has fewer articles)."""
        if not queries:
            return []
        texts = [q if q.strip() else "?" for q in queries]
        total = len(self.passages)
        want = min(k, len(self.articles))
        depth = min(total, k if self.chunking is None else max(k * 4, k + 20))
        out: list[SearchHits | None] = [None] * len(texts)
        todo = list(range(len(texts)))
        while todo:
            rows = self.pipeline.retriever.search_many([texts[i] for i in todo], depth)
            left = []
            for i, hits in zip(todo, rows, strict=True):
                chunk_articles = [self.table[p.document_id] for p in hits]
                ranking = list(dict.fromkeys(chunk_articles))
                if len(ranking) < want and depth < total and len(hits) >= depth:
                    left.append(i)
                    continue
                out[i] = SearchHits(ranking=ranking[:k], chunk_articles=chunk_articles[:k])
            todo = left
            depth = min(total, depth * 4)
        return [h for h in out if h is not None]

    def close(self) -> None:
        self.pipeline.close()


def check_standalone(spec: PipelineSpec, name: str) -> None:
    if spec.query.strategy == "rewrite":
        raise UsageError(f"pipeline {name!r} rewrites conversational queries with an LLM; the queries here are built "
                         f"by the bench (-T query=...), use a pipeline without rewriting")


def index_notes(info: dict[str, Any]) -> list[str]:
    """What the report says about the index: what was indexed, and what an encoder cut."""
    notes = [f"{info['articles']} articles indexed as {info['passages']} passages ({info['chunking']}) with "
             f"{info['spec']}"]
    for t in info["truncation"]:
        if t["truncated"]:
            notes.append(f"{t['encoder']} reads at most {t['max_tokens']} tokens: {t['truncated']} of "
                         f"{t['passages']} passages are cut (longest {t['longest']} tokens); chunk the articles "
                         f"(-T chunk=500) to embed all of their text")
    return notes
