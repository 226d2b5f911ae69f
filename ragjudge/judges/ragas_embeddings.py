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

import threading
from collections.abc import Sequence
from typing import Any

from ragjudge.judges.ragas_llm import no_retry
from ragjudge.retrieval.encoders import LiteLLMEncoder, SentenceTransformerEncoder

from ragjudge.judges.ragas_adapter import BaseRagasEmbeddings  # noqa: E402


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
        """Encode the texts not fetched yet (the event loop keeps running)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self.vectors))
        if not missing:
            return
        matrix = await self.encoder.aencode(missing)  # a local model's: with other items' texts, in a worker thread
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
