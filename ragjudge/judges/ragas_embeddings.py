"""ragas's embeddings interface over ragjudge's encoders, for RAGAS metrics that compare embeddings.

ResponseRelevancy and AnswerCorrectness's semantic similarity embed texts through `BaseRagasEmbeddings`. This
adapter hands those texts to a ragjudge encoder (`ragjudge.retrieval.encoders`): the bundled all-MiniLM-L6-v2
(default; offline), any sentence-transformers model, or an embeddings API through litellm and the run's gateway.
Either way the vectors go through the run's embedding store, so a text is encoded once, ever.

ResponseRelevancy calls the synchronous `embed_query`/`embed_documents` from inside the event loop, where an API
call cannot be awaited; so vectors are fetched ahead (`prefetch`, async) and the synchronous methods read them
back (a local model also encodes a text it was not given ahead, so `ragas.evaluate` can use this adapter as it is).
Encoders return unit vectors; ragas divides by the norms anyway, so cosines are unchanged.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ragjudge.errors import InputError
from ragjudge.judges.ragas_llm import no_retry
from ragjudge.judges.spec import JudgeSpec
from ragjudge.llm import LLMGateway
from ragjudge.retrieval.encoders import BUNDLED_MODELS, BUNDLED_NAME, LiteLLMEncoder, SentenceTransformerEncoder

from ragjudge.judges.ragas_adapter import BaseRagasEmbeddings  # noqa: E402


class EmbeddingOptions(BaseModel):
    """A judge spec's embedding options (the same names as a dense retriever's)."""

    model_config = ConfigDict(extra="ignore")

    encoder: Literal["sentence-transformers", "litellm"] = "sentence-transformers"
    embedding_model: str = "minilm"
    """`minilm` (the bundled all-MiniLM-L6-v2), a sentence-transformers name or folder, or with encoder=litellm a
    litellm embedding model (openai/text-embedding-3-small), called through the run's gateway."""

    @classmethod
    def of(cls, spec: JudgeSpec) -> EmbeddingOptions:
        try:
            return cls.model_validate(spec.options)
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"])
            raise InputError(error["msg"], file=spec.source, field=f"options.{where}") from None


@cache
def _sentence_encoder(model: str) -> SentenceTransformerEncoder:
    """One per model in the process: judges that share a model load it once."""
    return SentenceTransformerEncoder(model)


def encoder_for(options: EmbeddingOptions, gateway: LLMGateway | None) -> SentenceTransformerEncoder | LiteLLMEncoder:
    if options.encoder == "litellm":
        return LiteLLMEncoder(options.embedding_model, gateway=gateway)
    return _sentence_encoder(options.embedding_model)


def encoder_name(options: EmbeddingOptions) -> str:
    """The embedding model as results record it."""
    if options.encoder == "litellm":
        return options.embedding_model
    return BUNDLED_NAME if options.embedding_model in BUNDLED_MODELS else options.embedding_model


class EncoderRagasEmbeddings(BaseRagasEmbeddings):
    """ragas's `BaseRagasEmbeddings` over a ragjudge encoder. One per item: it keeps the vectors it fetched."""

    def __init__(self, encoder: SentenceTransformerEncoder | LiteLLMEncoder):
        super().__init__()
        self.encoder = encoder
        self.run_config = no_retry()  # ragas wraps async embedding calls in tenacity retries: the gateway retries
        self.vectors: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    def set_run_config(self, run_config: Any) -> None:
        self.run_config = no_retry(run_config)

    async def prefetch(self, texts: Sequence[str]) -> None:
        """Encode the texts not fetched yet (local models in a worker thread: the event loop keeps running)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if not missing:
            return
        if isinstance(self.encoder, LiteLLMEncoder):
            matrix = await self.encoder.aencode(missing)
        else:
            matrix = await asyncio.to_thread(self.encoder.encode, missing)
        with self._lock:
            self.vectors.update({text: [float(x) for x in row] for text, row in zip(missing, matrix, strict=True)})

    def _vector(self, text: str) -> list[float]:
        if text not in self.vectors:
            if isinstance(self.encoder, LiteLLMEncoder):  # an API call cannot be awaited from here
                raise RuntimeError(f"text not prefetched before ragas's synchronous embedding call: {text[:80]!r}")
            [row] = self.encoder.encode([text])  # a local model: encoded here (how ragas.evaluate calls it)
            with self._lock:
                self.vectors[text] = [float(x) for x in row]
        return self.vectors[text]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    async def aembed_query(self, text: str) -> list[float]:
        await self.prefetch([text])
        return self._vector(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        await self.prefetch(texts)
        return self.embed_documents(texts)
