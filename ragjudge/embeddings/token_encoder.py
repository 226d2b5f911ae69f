"""Token embeddings of texts, computed exactly as bert-score computes them, but each text once and unpadded.

On CPU the cost of BERTScore is the transformer over long passages; bert-score pads every batch to its
longest text and, called once per pair, re-encodes every passage for every answer. Here texts are sorted by
token count and batched so that padding stays negligible. Tokenizer, truncation and layer cut come from
bert-score's own helpers, so the vectors are the ones it would match.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from ragjudge.embeddings.device import resolve_device
from ragjudge.embeddings.quiet_loading import quiet_model_loading

TOKEN_BUDGET = 4096
"""Padded tokens per forward pass: enough to keep the matrix products efficient on a few CPU cores."""
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


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def use_cores(threads: int | None = None) -> None:
    """Torch intra-op threads: `threads`, else one per core this process may use (OMP_NUM_THREADS, if set, wins)."""
    import torch

    if threads is None:
        if "OMP_NUM_THREADS" in os.environ:
            return
        threads = available_cores()
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


class TokenEncoder:
    """A BERTScore model as bert-score loads it (slow tokenizer, layers cut at `num_layers`).

    The tokenizer loads at once (cheap); the model on first use, so a fully cached run never loads it.
    """

    def __init__(self, model_type: str, num_layers: int, *, device: str = "auto", threads: int | None = None):
        from bert_score.utils import get_tokenizer

        self.model_type = model_type
        self.num_layers = num_layers
        self.device = resolve_device(device)
        """Where the model runs (`auto` resolved: CUDA, else MPS, else CPU)."""
        self.threads = threads
        """None: one per available core (`use_cores`)."""
        with quiet_model_loading():
            self.tokenizer = get_tokenizer(model_type, use_fast=False)  # bert-score's default: same token ids
        self._model = None
        self.texts_encoded = 0
        """Texts run through the model by this encoder: what a warm embedding cache saves."""
        self.tokens_encoded = 0
        self.padding_tokens = 0

    @property
    def model(self):
        if self._model is None:
            from bert_score.utils import get_model

            use_cores(self.threads)
            with quiet_model_loading():
                self._model = get_model(self.model_type, self.num_layers, all_layers=False).to(self.device)
        return self._model

    def tokenize(self, text: str) -> list[int]:
        """bert-score's `sent_encode`: stripped, special tokens added, truncated to the model's maximum."""
        from bert_score.utils import sent_encode

        if not text.strip():  # bert-score encodes "" as bare special tokens, via a method transformers 5 removed
            build = getattr(self.tokenizer, "build_inputs_with_special_tokens", None)
            return list(build([]) if build else self.tokenizer.encode("", add_special_tokens=True))
        return list(sent_encode(self.tokenizer, text))

    def encode_batches(self, texts: Sequence[str]) -> Iterator[tuple[list[int], list[TokenEmbeddings]]]:
        """(indices into `texts`, their embeddings), batch by batch, so callers can store results as they come."""
        import torch

        ids = [self.tokenize(t) for t in texts]
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        for batch in plan_batches([len(x) for x in ids]):
            width = max(len(ids[i]) for i in batch)
            tokens = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for row, i in enumerate(batch):
                tokens[row, : len(ids[i])] = torch.tensor(ids[i], dtype=torch.long)
                mask[row, : len(ids[i])] = 1
            with torch.inference_mode():
                hidden = self.model(tokens.to(self.device), attention_mask=mask.to(self.device))[0].float().cpu()
            self.texts_encoded += len(batch)
            self.tokens_encoded += int(mask.sum())
            self.padding_tokens += int(mask.numel() - mask.sum())
            yield batch, [TokenEmbeddings(ids=np.asarray(ids[i], dtype=np.int32),
                                          vectors=hidden[row, : len(ids[i])].numpy().copy())
                          for row, i in enumerate(batch)]
