"""BERTScore that encodes each distinct text once per run — or never again, with the embedding cache.

Scores equal bert-score's one-call-per-pair results (the official scripts' pattern) to float32 rounding:
same tokenizer, layer and matching, only without re-encoding and padding. What was encoded and what came
from the cache is counted in `stats`.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ragjudge.metrics.bertscore import BertScoreConfig
from ragjudge.metrics.embedding_cache import EmbeddingCache, EmbeddingCacheWarning, space_key
from ragjudge.metrics.greedy_match import MatchInput, greedy_match, load_baseline, match_input, rescale
from ragjudge.metrics.token_encoder import TokenEncoder


@dataclass(frozen=True)
class EmbeddingStats:
    texts_encoded: int
    """Texts run through the model (cache misses)."""
    tokens_encoded: int
    padding_tokens: int
    cache_hits: int
    cache_writes: int
    cache_folder: str | None
    """Where this model's embeddings are kept; None without a cache (off or unwritable)."""


def resolve_layers(config: BertScoreConfig) -> int:
    """bert-score's layer choice: the configured one, else its tuned default for the model."""
    if config.num_layers is not None:
        return config.num_layers
    from bert_score.utils import model2layers

    if config.model_path not in model2layers:
        raise ValueError(f"bert-score has no default layer for {config.model_path!r}; pass a local model folder")
    return model2layers[config.model_path]


class CachedBertScorer:
    """Score lists of (candidate, reference) pairs; the model loads only if some text is not cached."""

    def __init__(self, config: BertScoreConfig, *, cache_root: Path | None = None, device: str = "cpu"):
        self.config = config
        self.num_layers = resolve_layers(config)
        self.device = device
        self.cache_root = cache_root
        self._encoder: TokenEncoder | None = None
        self._cache: EmbeddingCache | None = None
        self._cache_checked = cache_root is None
        self._baseline = load_baseline(config.model_path, self.num_layers) if config.rescale else None
        self._lock = threading.Lock()

    @property
    def encoder(self) -> TokenEncoder:
        if self._encoder is None:
            self._encoder = TokenEncoder(self.config.model_path, self.num_layers, device=self.device)
        return self._encoder

    @property
    def cache(self) -> EmbeddingCache | None:
        if not self._cache_checked:
            self._cache_checked = True
            self._cache = self._open_cache()
        return self._cache

    def _open_cache(self) -> EmbeddingCache | None:
        assert self.cache_root is not None
        tokenizer = self.encoder.tokenizer

        def key() -> dict | None:
            return space_key(self.config.model_path, self.num_layers, max_length=int(tokenizer.model_max_length),
                             tokenizer=type(tokenizer).__name__, device=self.device)

        found = key()
        if found is None:  # a hub name not downloaded yet: loading the model fetches it
            _ = self.encoder.model
            found = key()
        if found is None:
            warnings.warn(f"embedding cache off: no local files identify {self.config.model_path!r}",
                          EmbeddingCacheWarning, stacklevel=4)
            return None
        return EmbeddingCache(self.cache_root, found)

    @property
    def stats(self) -> EmbeddingStats:
        cache, encoder = self._cache, self._encoder
        return EmbeddingStats(texts_encoded=encoder.texts_encoded if encoder else 0,
                              tokens_encoded=encoder.tokens_encoded if encoder else 0,
                              padding_tokens=encoder.padding_tokens if encoder else 0,
                              cache_hits=cache.hits if cache else 0, cache_writes=cache.writes if cache else 0,
                              cache_folder=str(cache.folder) if cache and cache.writable else None)

    def embed(self, texts: Iterable[str]) -> dict[str, MatchInput]:
        """Every distinct text of `texts`, ready to match: from the cache when there, else encoded (and stored).

        Raw vectors are turned into match inputs at once, so only one copy of a chunk's embeddings is alive.
        """
        tokenizer = self.encoder.tokenizer
        special = (tokenizer.sep_token_id, tokenizer.cls_token_id)
        ready: dict[str, MatchInput] = {}
        missing: list[str] = []
        for text in dict.fromkeys(texts):
            entry = self.cache.get(text) if self.cache is not None else None
            if entry is None:
                missing.append(text)
            else:
                ready[text] = match_input(entry.vectors, entry.ids, special)
        for batch, embeddings in self.encoder.encode_batches(missing) if missing else ():
            for i, emb in zip(batch, embeddings, strict=True):
                if self.cache is not None:
                    self.cache.put(missing[i], emb)
                ready[missing[i]] = match_input(emb.vectors, emb.ids, special)
        return ready

    def score(self, candidates: Sequence[str], references: Sequence[str]
              ) -> tuple[list[float], list[float], list[float]]:
        """(precision, recall, F1) per pair, as `bert_score.BERTScorer.score` on that pair alone."""
        if len(candidates) != len(references):
            raise ValueError("candidates and references differ in length")
        if not candidates:
            return [], [], []
        import torch

        with self._lock:
            inputs = self.embed([*candidates, *references])
            with torch.inference_mode():
                scores = torch.stack([greedy_match(inputs[c], inputs[r]) for c, r in zip(candidates, references)])
                if self._baseline is not None:
                    scores = rescale(scores, self._baseline)
        p, r, f = scores.T.tolist()
        return p, r, f
