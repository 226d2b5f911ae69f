"""Token embeddings of texts, computed exactly as bert-score computes them, but each text once and unpadded.

On CPU the cost of BERTScore is the transformer over long passages; bert-score pads every batch to its
longest text and, called once per pair, re-encodes every passage for every answer. Here texts are sorted by
token count and batched so that padding stays negligible. Tokenizer, truncation and layer cut come from
bert-score's own helpers, so the vectors are the ones it would match.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ragjudge.embeddings.device import resolve_device, use_cores
from ragjudge.embeddings.model_files import model_files
from ragjudge.embeddings.onnx_encoder import OnnxTransformer, choose_backend, token_layout
from ragjudge.embeddings.quiet_loading import quiet_model_loading
from ragjudge.embeddings.scope import backend_override
from ragjudge.errors import UsageError
from ragjudge.llm.cache import default_cache_dir

TOKEN_BUDGET = 4096
"""Padded tokens per forward pass on the CPU: enough to keep the matrix products efficient on a few cores."""
GPU_TOKEN_BUDGET = 32768
"""On a GPU: enough texts in flight to fill it."""
MAX_PADDING = 0.05
"""A batch is closed before padding would exceed this share of its tokens."""


@dataclass(frozen=True)
class TokenEmbeddings:
    """One text's token ids (special tokens included) and their final-layer vectors, float32."""

    ids: np.ndarray
    vectors: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.ids.nbytes + self.vectors.nbytes)


def plan_batches(lengths: Sequence[int], *, token_budget: int = TOKEN_BUDGET,
                 max_padding: float = MAX_PADDING) -> list[list[int]]:
    """Indices of `lengths` grouped into batches: sorted by length, each within the token budget and padding cap.

    A text longer than the budget gets a batch of its own.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    tokens = 0
    for i in order:
        n = lengths[i]
        padded = (len(current) + 1) * n  # sorted ascending: the newcomer is the longest
        if current and (padded > token_budget or padded - (tokens + n) > max_padding * padded):
            batches.append(current)
            current, tokens = [], 0
        current.append(i)
        tokens += n
    if current:
        batches.append(current)
    return batches


class TokenEncoder:
    """A BERTScore model as bert-score loads it (slow tokenizer, layers cut at `num_layers`), run by PyTorch or by
    ONNX Runtime (`backend`: `auto` takes ONNX Runtime when it is installed, the model runs on the CPU and is a
    BERT-family encoder; its token vectors equal PyTorch's to float32 rounding).

    The tokenizer loads at once (cheap); the model on first use, so a fully cached run never loads it.
    """

    def __init__(self, model_type: str, num_layers: int, *, device: str = "auto", threads: int | None = None,
                 backend: str = "auto", export_cache: Path | None = None):
        self.model_type = model_type
        self.num_layers = num_layers
        self.device = resolve_device(device)
        """Where the model runs (`auto` resolved: CUDA, else MPS, else CPU)."""
        self.folder = model_files(model_type)
        backend = backend_override() or backend  # the run's --encoder-backend wins
        self.backend, why = choose_backend(backend, self.folder, self.device, token_layout)
        """`onnx` or `torch`: what runs the model (`auto` resolved)."""
        if why and backend == "onnx":
            raise UsageError(f"backend onnx for BERTScore's {model_type}: {why}")
        self.export_cache = export_cache
        """Where an ONNX export is kept (`onnx_export.onnx_root`); None: the default cache folder."""
        self.threads = threads
        """None: one per available core (`use_cores`)."""
        with quiet_model_loading():
            from bert_score.utils import get_tokenizer

            self.tokenizer = get_tokenizer(model_type, use_fast=False)  # bert-score's default: same token ids
        self.texts_encoded = 0
        """Texts run through the model by this encoder: what a warm embedding cache saves."""
        self.tokens_encoded = 0
        self.padding_tokens = 0

    @cached_property
    def model(self):
        """The loaded model (on first use): a torch module, or an `OnnxTransformer`."""
        if self.backend == "onnx":
            assert self.folder is not None, "choose_backend gives onnx only for a local folder"
            return OnnxTransformer(self.folder, self.export_cache or default_cache_dir(), num_layers=self.num_layers,
                                   threads=self.threads)
        use_cores(self.threads)
        with quiet_model_loading():
            from bert_score.utils import get_model

            return get_model(self.model_type, self.num_layers, all_layers=False).to(self.device)

    def tokenize(self, text: str) -> list[int]:
        """bert-score's `sent_encode`: stripped, special tokens added, truncated to the model's maximum."""
        from bert_score.utils import sent_encode

        if not text.strip():  # bert-score encodes "" as bare special tokens, via a method transformers 5 removed
            build = getattr(self.tokenizer, "build_inputs_with_special_tokens", None)
            return list(build([]) if build else self.tokenizer.encode("", add_special_tokens=True))
        return list(sent_encode(self.tokenizer, text))

    def padded_batches(self, texts: Sequence[str]) -> Iterator[tuple[list[int], list[list[int]], np.ndarray, np.ndarray]]:
        """(indices into `texts`, their token ids, padded ids, mask) per batch, as `encode_batches` runs them."""
        ids = [self.tokenize(t) for t in texts]
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        budget = TOKEN_BUDGET if self.device == "cpu" else GPU_TOKEN_BUDGET
        for batch in plan_batches([len(x) for x in ids], token_budget=budget):
            width = max(len(ids[i]) for i in batch)
            tokens = np.full((len(batch), width), pad, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                tokens[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            yield batch, [ids[i] for i in batch], tokens, mask

    def forward(self, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The model's last kept layer for one padded batch, float32 on the CPU."""
        model = self.model
        if self.backend == "onnx":
            return model.run(tokens, mask)
        import torch

        with torch.inference_mode():
            hidden = model(torch.from_numpy(tokens).to(self.device), attention_mask=torch.from_numpy(mask).to(self.device))[0]
            return hidden.float().cpu().numpy()

    def encode_batches(self, texts: Sequence[str]) -> Iterator[tuple[list[int], list[TokenEmbeddings]]]:
        """(indices into `texts`, their embeddings), batch by batch, so callers can store results as they come."""
        for batch, ids, tokens, mask in self.padded_batches(texts):
            hidden = self.forward(tokens, mask)
            self.texts_encoded += len(batch)
            self.tokens_encoded += int(mask.sum())
            self.padding_tokens += int(mask.size - mask.sum())
            yield batch, [TokenEmbeddings(ids=np.asarray(row_ids, dtype=np.int32),
                                          vectors=hidden[row, : len(row_ids)].copy())
                          for row, row_ids in enumerate(ids)]
