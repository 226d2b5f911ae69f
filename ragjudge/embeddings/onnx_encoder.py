"""A sentence-transformers model run by ONNX Runtime on the CPU: the same vectors as PyTorch's, faster.

The model's transformer is exported once from its local folder (`torch.onnx.export`, nothing downloaded) into the
cache, in a folder named by a hash of the model folder, its files and the exporting libraries' versions, so a changed
model is exported again and two models never share a file. ONNX Runtime runs it with every graph optimisation and one
intra-op thread per core, after ONNX Runtime's BERT optimiser has fused attention, GELU and layer norms into its
own kernels; tokenising, mean pooling and normalisation are sentence-transformers' own steps, so the
vectors match PyTorch's to float32 rounding. Only the layout most sentence-transformers models have is taken (the
transformer at the folder's root, then mean pooling, then an optional Normalize): `onnx_layout` says whether a
folder has it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.embeddings.quiet_loading import quiet_model_loading
from ragjudge.embeddings.spaces import files_fingerprint, library_versions
from ragjudge.embeddings.token_encoder import available_cores

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def onnxruntime_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("onnxruntime") is not None


def onnx_layout(folder: Path) -> str | None:
    """None when the folder is a transformer at its root followed by mean pooling (and maybe Normalize), the layout
    this module runs; else why not."""
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


BACKENDS = ("auto", "torch", "onnx")


def choose_backend(requested: str, folder: Path | None, device: str) -> tuple[str, str | None]:
    """(`torch` or `onnx`, why not ONNX): `auto` is ONNX Runtime when it is installed, the model runs on the CPU and
    its folder has the layout this module runs, else PyTorch; `onnx` asked for where it cannot run is an error for
    the caller to raise with the reason given."""
    if requested == "torch":
        return "torch", None
    why = ("onnxruntime is not installed (pip install 'ragjudge[onnx]')" if not onnxruntime_installed()
           else f"the ONNX backend runs on the CPU, not {device}" if device != "cpu"
           else "the model has no local folder" if folder is None else onnx_layout(folder))
    return ("torch", why) if why else ("onnx", None)


def export_folder(cache: Path, model_folder: Path) -> Path:
    """Where the model's export lives in the cache: keyed by the folder, its files and the exporting libraries."""
    key = {"folder": str(model_folder), "files": files_fingerprint(model_folder),
           "graph": "eager attention, fused", **library_versions("torch", "transformers", "onnx", "onnxruntime")}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return cache / "onnx" / f"{model_folder.name}-{digest}"


def export(model_folder: Path, target: Path) -> Path:
    """`target`/model.onnx, exported from the local weights unless already there (written whole or not at all)."""
    path = target / "model.onnx"
    if path.is_file():
        return path
    import torch
    from transformers import AutoModel

    with quiet_model_loading():
        # eager attention: the pattern ONNX Runtime's transformer optimiser fuses into its Attention kernel
        model = AutoModel.from_pretrained(str(model_folder), attn_implementation="eager").eval()
    target.mkdir(parents=True, exist_ok=True)

    class Transformer(torch.nn.Module):  # named inputs in, the last hidden state out
        def __init__(self) -> None:
            super().__init__()
            self.model = model  # a sub-module: its weights are the graph's initialisers, not traced constants

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                         return_dict=True).last_hidden_state

    sample = (torch.ones((2, 8), dtype=torch.long), torch.ones((2, 8), dtype=torch.long),
              torch.zeros((2, 8), dtype=torch.long))
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    partial = target / f"model.onnx.{os.getpid()}.tmp"
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on code paths a fixed-layout encoder never takes
        torch.onnx.export(Transformer().eval(), sample, str(partial), input_names=list(INPUTS),
                          output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)
    fuse(partial, model_folder)
    os.replace(partial, path)
    return path


def fuse(path: Path, model_folder: Path) -> None:
    """ONNX Runtime's BERT optimiser, in place: embeddings + layer norm, attention, bias + GELU and skip + layer norm
    each become one fused CPU kernel (the graph's arithmetic is unchanged: vectors move by float32 rounding).
    A graph it does not recognise is left as exported."""
    from onnxruntime.transformers import optimizer

    config = json.loads((model_folder / "config.json").read_text(encoding="utf-8"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = optimizer.optimize_model(str(path), model_type="bert", num_heads=int(config["num_attention_heads"]),
                                         hidden_size=int(config["hidden_size"]), opt_level=0, use_gpu=False)
    fused.save_model_to_file(str(path))


class OnnxSentenceModel:
    """`encode` as sentence-transformers' for a mean-pooling model, run by ONNX Runtime on the CPU."""

    def __init__(self, model_folder: Path, cache: Path, *, max_seq_length: int, threads: int | None = None):
        import onnxruntime as ort
        from transformers import AutoTokenizer

        with quiet_model_loading():
            self.tokenizer = AutoTokenizer.from_pretrained(str(model_folder))
        self.max_seq_length = max_seq_length
        self.path = export(model_folder, export_folder(cache, model_folder))
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads or available_cores()
        options.log_severity_level = 3
        self.session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self.session.get_inputs()}
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str], *, batch_size: int, normalize: bool) -> np.ndarray:
        out = []
        for start in range(0, len(texts), batch_size):
            batch = [str(t).strip() for t in texts[start : start + batch_size]]
            feed: dict[str, Any] = dict(self.tokenizer(batch, padding=True, truncation="longest_first",
                                                       max_length=self.max_seq_length, return_tensors="np"))
            feed = {k: v.astype(np.int64) for k, v in feed.items() if k in self._inputs}
            if "token_type_ids" in self._inputs and "token_type_ids" not in feed:
                feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
            hidden = self.session.run(["last_hidden_state"], feed)[0]
            out.append(mean_pool(hidden, feed["attention_mask"], normalize))
        return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)


def mean_pool(hidden: np.ndarray, mask: np.ndarray, normalize: bool) -> np.ndarray:
    """sentence-transformers' mean pooling (padding masked out) and, if asked, its L2 normalisation."""
    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    if normalize:
        pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
    return pooled.astype(np.float32, copy=False)
