"""Local transformers run by ONNX Runtime on the CPU: the same vectors as PyTorch's, faster.

`OnnxTransformer` runs an export (`onnx_export`) with every graph optimisation and one intra-op thread per core;
`OnnxSentenceModel` adds sentence-transformers' own tokenising, mean pooling and normalisation, so the vectors match
PyTorch's to float32 rounding; BERTScore's token encoder feeds it bert-score's token ids. Only layouts these steps
reproduce are taken: `onnx_layout` (a sentence model) and `token_layout` (a BERT-family encoder) say whether a
folder has one, and `choose_backend` turns that into the backend `auto` picks.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.embeddings.onnx_export import export, export_folder, model_config
from ragjudge.embeddings.quiet_loading import quiet_model_loading
from ragjudge.errors import UsageError
from ragjudge.embeddings.device import available_cores

BACKENDS = ("auto", "torch", "onnx")
PRECISIONS = ("auto", "fp32", "tf32", "bf16x3", "fp16", "int8")


def _one_of(requested: str, allowed: tuple[str, ...], option: str) -> str:
    """`requested`, stripped and lower-cased, if it is in `allowed`; else one UsageError naming the option."""
    value = str(requested).strip().lower()
    if value not in allowed:
        raise UsageError(f"{option}: {requested!r} is not one of {', '.join(allowed)}")
    return value


def check_backend(requested: str, option: str = "backend") -> str:
    return _one_of(requested, BACKENDS, option)


def check_precision(requested: str, option: str = "precision") -> str:
    return _one_of(requested, PRECISIONS, option)


def onnxruntime_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None


def onnx_layout(folder: Path) -> str | None:
    """None when the folder is a transformer at its root followed by mean pooling (and maybe Normalize), the layout
    the sentence model runs; else why not."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        kinds = [str(m["type"]).rsplit(".", 1)[-1] for m in modules]
        pooling = next(m for m in modules if str(m["type"]).endswith("Pooling"))
        config = json.loads((folder / pooling["path"] / "config.json").read_text(encoding="utf-8"))
        lower = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8")).get("do_lower_case")
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return f"{folder} is not a sentence-transformers folder with a pooling module"
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]) or modules[0].get("path"):
        return f"{folder}: modules {kinds} (the ONNX backend runs Transformer, Pooling[, Normalize])"
    modes = {k for k, v in config.items() if k.startswith("pooling_mode") and v is True}
    if modes != {"pooling_mode_mean_tokens"} or lower:
        return f"{folder}: pooling {sorted(modes)}{' with lower-casing' if lower else ''} (the ONNX backend: mean only)"
    return None


TOKEN_MODEL_TYPES = ("bert", "roberta", "xlm-roberta")


def token_layout(folder: Path) -> str | None:
    """None when the folder is a BERT-family encoder (its layers under `encoder.layer`, cut as bert-score cuts them);
    else why not."""
    try:
        kind = str(model_config(folder).get("model_type"))
    except (OSError, ValueError):
        return f"{folder} has no readable config.json"
    return None if kind in TOKEN_MODEL_TYPES else (
        f"{folder}: model type {kind} (the ONNX backend runs {', '.join(TOKEN_MODEL_TYPES)})")


def choose_backend(requested: str, folder: Path | None, device: str,
                   layout: Callable[[Path], str | None] = onnx_layout) -> tuple[str, str | None]:
    """(`torch` or `onnx`, why not ONNX): `auto` is ONNX Runtime when it is installed, the model runs on the CPU and
    its folder has a layout it runs (`layout`), else PyTorch; `onnx` asked for where it cannot run is an error for
    the caller to raise with the reason given."""
    if requested == "torch":
        return "torch", None
    why = ("onnxruntime is not installed (pip install 'ragjudge[onnx]')" if not onnxruntime_installed()
           else f"the ONNX backend runs on the CPU, not {device}" if device != "cpu"
           else "the model has no local folder" if folder is None else layout(folder))
    return ("torch", why) if why else ("onnx", None)


class OnnxTransformer:
    """An exported transformer in an ONNX Runtime session: token ids and mask in, the last hidden state out.

    An export folder this process cannot read or write (a read-only shared cache) is not an error: the model is
    exported into a private temporary folder for this run instead, deleted once the session holds the graph."""

    def __init__(self, model_folder: Path, cache: Path, *, num_layers: int | None = None, precision: str = "fp32",
                 threads: int | None = None):
        self.threads = threads or available_cores()
        try:
            self.path = export(model_folder, export_folder(cache, model_folder, num_layers), num_layers, precision)
            self.session = self._session(self.path)
        except (OSError, RuntimeError):  # unreadable or unwritable: ONNX Runtime's load errors are RuntimeErrors
            with tempfile.TemporaryDirectory(prefix="ragjudge-onnx-") as private:
                self.path = export(model_folder, Path(private), num_layers, precision)
                self.session = self._session(self.path)
        self._inputs = {i.name for i in self.session.get_inputs()}

    def _session(self, path: Path) -> Any:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = self.threads
        options.log_severity_level = 3
        # idle threads sleep rather than spin: as fast on large batches, and fair to other processes on the machine
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def run(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        """(batch, tokens, hidden) float32; token types are all zero, as for a single-segment input."""
        feed = {"input_ids": input_ids.astype(np.int64, copy=False),
                "attention_mask": attention_mask.astype(np.int64, copy=False),
                "token_type_ids": np.zeros_like(input_ids, dtype=np.int64)}
        return self.session.run(["last_hidden_state"], {k: v for k, v in feed.items() if k in self._inputs})[0]


class OnnxSentenceModel:
    """`encode` as sentence-transformers' for a mean-pooling model, run by ONNX Runtime on the CPU."""

    def __init__(self, model_folder: Path, cache: Path, *, max_seq_length: int, precision: str = "fp32",
                 threads: int | None = None):
        self.model_folder = model_folder
        self.max_seq_length = max_seq_length
        self.transformer = OnnxTransformer(model_folder, cache, precision=precision, threads=threads)
        self.path = self.transformer.path

    @cached_property
    def tokenizer(self) -> Any:
        """transformers' tokenizer, loaded when `encode` first needs it: the indexing pipeline feeds the transformer
        with its own (`embeddings.batch_tokenizer`), and a process that only runs that never imports transformers."""
        with quiet_model_loading():
            from transformers import AutoTokenizer

            return AutoTokenizer.from_pretrained(str(self.model_folder))

    def batches(self, texts: Sequence[str], batch_size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(token ids, attention mask) per batch, tokenised and truncated as sentence-transformers does."""
        for start in range(0, len(texts), batch_size):
            batch = [str(t).strip() for t in texts[start : start + batch_size]]
            feed: dict[str, Any] = self.tokenizer(batch, padding=True, truncation="longest_first",
                                                  max_length=self.max_seq_length, return_tensors="np")
            yield feed["input_ids"], feed["attention_mask"]

    def encode(self, texts: Sequence[str], *, batch_size: int, normalize: bool) -> np.ndarray:
        out = [mean_pool(self.transformer.run(ids, mask), mask, normalize)
               for ids, mask in self.batches(texts, batch_size)]
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)


class OnnxMeanPooling:
    """The pipeline's `Forward` on ONNX Runtime: the transformer, then mean pooling (synchronous: `launch` computes)."""

    def __init__(self, transformer: OnnxTransformer, *, normalize: bool):
        self.transformer = transformer
        self.normalize = normalize

    def launch(self, batch: Any) -> np.ndarray:
        return mean_pool(self.transformer.run(batch.ids, batch.mask), batch.mask, self.normalize)

    def fetch(self, handle: np.ndarray) -> np.ndarray:
        return handle


def mean_pool(hidden: np.ndarray, mask: np.ndarray, normalize: bool) -> np.ndarray:
    """sentence-transformers' mean pooling (padding masked out) and, if asked, its L2 normalisation."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    if normalize:
        pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return pooled.astype(np.float32, copy=False)
