"""BERTScore that encodes each distinct text once per run — or never again, with the embedding store.

Scores equal bert-score's one-call-per-pair results (the official scripts' pattern) to float32 rounding:
same tokenizer, layer and matching, only without re-encoding and padding. What was encoded and what came
from the cache is counted in `stats`.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from ragjudge.embeddings.model_files import files_fingerprint, library_versions, model_files
from ragjudge.embeddings.spaces import TokenSpace
from ragjudge.embeddings.store import EmbeddingStore, EmbeddingStoreWarning
from ragjudge.embeddings.bertscore import BertScoreConfig
from ragjudge.embeddings.device import resolve_device
from ragjudge.embeddings.greedy_match import MatchInput, greedy_match, load_baseline, match_input, rescale
from ragjudge.embeddings.token_encoder import TokenEncoder


@dataclass(frozen=True)
class EmbeddingStats:
    texts_encoded: int
    """Texts run through the model (cache misses)."""
    tokens_encoded: int
    padding_tokens: int
    cache_hits: int
    cache_writes: int
    cache_folder: str | None
    """The embedding store file; None without a store (off or unwritable)."""


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

    def __init__(self, config: BertScoreConfig, *, store: EmbeddingStore | None = None, device: str = "auto",
                 backend: str = "auto"):
        self.config = config
        self.num_layers = resolve_layers(config)
        self.device = resolve_device(device)
        """Where the model runs (`auto` resolved); its type is in the store's key."""
        self.requested_backend = backend
        """`auto`, `torch` or `onnx`; the encoder's `backend` is what runs the model."""
        self.store = store
        self._encoder: TokenEncoder | None = None
        self._baseline = load_baseline(config.model_path, self.num_layers) if config.rescale else None
        self._lock = threading.Lock()

    @property
    def encoder(self) -> TokenEncoder:
        if self._encoder is None:
            self._encoder = TokenEncoder(self.config.model_path, self.num_layers, device=self.device,
                                         backend=self.requested_backend,
                                         export_cache=self.store.folder if self.store is not None else None)
        return self._encoder

    @cached_property
    def cache(self) -> TokenSpace | None:
        """This model and layer's space in the store: everything that changes the token vectors is in its key."""
        if self.store is None:
            return None
        folder = model_files(self.config.model_path)
        if folder is None:  # a hub name not downloaded yet: loading the model fetches it
            _ = self.encoder.model
            folder = model_files(self.config.model_path)
        if folder is None:
            warnings.warn(f"embedding cache off: no local files identify {self.config.model_path!r}",
                          EmbeddingStoreWarning, stacklevel=4)
            return None
        tokenizer = self.encoder.tokenizer
        key = {"encoder": "bert-score", "folder": str(folder), "files": files_fingerprint(folder),
               "num_layers": self.num_layers, "tokenizer": type(tokenizer).__name__, "use_fast_tokenizer": False,
               "max_length": int(tokenizer.model_max_length), "dtype": "float32", "device": self.device.split(":")[0],
               **library_versions("torch", "transformers", "bert-score")}
        if self.encoder.backend == "onnx":  # PyTorch's vectors keep the key they always had: the two never mix
            key.update({"backend": "onnx", **library_versions("onnxruntime", "onnx")})
        return TokenSpace(self.store, key, f"{self.config.describe()} layer {self.num_layers} (BERTScore tokens)")

    @property
    def facts(self) -> dict[str, str]:
        """What a run records of how BERTScore ran: the device and the backend (`auto` resolved)."""
        return {"device": self.device, "backend": self.encoder.backend}

    @property
    def stats(self) -> EmbeddingStats:
        cache, encoder = self.__dict__.get("cache"), self._encoder  # as they are: reading stats loads nothing
        return EmbeddingStats(texts_encoded=encoder.texts_encoded if encoder else 0,
                              tokens_encoded=encoder.tokens_encoded if encoder else 0,
                              padding_tokens=encoder.padding_tokens if encoder else 0,
                              cache_hits=cache.hits if cache else 0, cache_writes=cache.writes if cache else 0,
                              cache_folder=str(cache.store.path) if cache and cache.store.writable else None)

    def embed(self, texts: Iterable[str]) -> dict[str, MatchInput]:
        """Every distinct text of `texts`, ready to match: from the cache when there, else encoded (and stored).

        Raw vectors are turned into match inputs at once, so only one copy of a chunk's embeddings is alive.
        """
        tokenizer = self.encoder.tokenizer
        special = (tokenizer.sep_token_id, tokenizer.cls_token_id)
        ready: dict[str, MatchInput] = {}
        distinct = list(dict.fromkeys(texts))
        stored = self.cache.get(distinct) if self.cache is not None else {}
        for text, entry in stored.items():
            ready[text] = match_input(entry.vectors, entry.ids, special)
        missing = [t for t in distinct if t not in stored]
        for batch, embeddings in self.encoder.encode_batches(missing) if missing else ():
            if self.cache is not None:  # one transaction per batch: a killed run keeps what it encoded
                self.cache.put([missing[i] for i in batch], embeddings)
            for i, emb in zip(batch, embeddings, strict=True):
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
