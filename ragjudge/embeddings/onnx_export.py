"""A local transformer exported once to ONNX, fused, and (on request) quantised: the files ONNX Runtime runs.

The export is made from the model's local folder (`torch.onnx.export`, nothing downloaded) into a folder named by a
hash of the model folder, its files, the layers kept and the exporting libraries' versions, so a changed model is
exported again and two models never share a file. Sentence encoders and BERTScore's token encoder ask for the same
graph when they keep the same layers (MiniLM: all six), so one export serves both. The folder is
`$RAGJUDGE_ONNX_DIR` when set (one place for every run on a machine), else `onnx/` beside the run's embedding store.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

from ragjudge.embeddings.quiet_loading import quiet_model_loading
from ragjudge.embeddings.model_files import files_fingerprint, library_versions

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
ONNX_DIR_ENV = "RAGJUDGE_ONNX_DIR"
FUSED_TYPES = {"bert": "bert", "roberta": "bert", "xlm-roberta": "bert"}
"""Model types whose graph ONNX Runtime's BERT optimiser fuses (attention, GELU, layer norms)."""


def onnx_root(cache: Path) -> Path:
    """Where exports live: `$RAGJUDGE_ONNX_DIR`, else `<cache>/onnx`."""
    configured = os.environ.get(ONNX_DIR_ENV, "").strip()
    return Path(configured).expanduser() if configured else cache / "onnx"


def model_config(model_folder: Path) -> dict[str, Any]:
    return json.loads((model_folder / "config.json").read_text(encoding="utf-8"))


def layer_count(model_folder: Path, num_layers: int | None = None) -> int:
    total = int(model_config(model_folder)["num_hidden_layers"])
    return total if num_layers is None else min(int(num_layers), total)


def export_folder(cache: Path, model_folder: Path, num_layers: int | None = None) -> Path:
    """Where the model's export lives: keyed by the folder, its files, the layers kept and the exporting libraries."""
    key = {"folder": str(model_folder), "files": files_fingerprint(model_folder),
           "layers": layer_count(model_folder, num_layers),
           "graph": "eager attention, fused; int8 per channel", **library_versions("torch", "transformers", "onnx", "onnxruntime")}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return onnx_root(cache) / f"{model_folder.name}-{digest}"


def export(model_folder: Path, target: Path, num_layers: int | None = None, precision: str = "fp32") -> Path:
    """The graph file for `precision` in `target` (fp32 `model.onnx`, int8 `model.int8.onnx`), made unless already
    there, each written whole or not at all."""
    path = target / "model.onnx"
    made = target / "model.int8.onnx" if precision == "int8" else path
    if made.is_file():  # made before: nothing to export, and no loading lock (it imports transformers)
        return made
    with quiet_model_loading():  # one export at a time in a process: torch.onnx's state is process-wide
        if not path.is_file():
            _export_fp32(model_folder, target, path, num_layers)
        if precision == "int8":
            return quantize(path, target / "model.int8.onnx")
    return path


def _export_fp32(model_folder: Path, target: Path, path: Path, num_layers: int | None) -> None:
    import torch
    from transformers import AutoModel

    with quiet_model_loading():  # held by export(); re-entrant
        # eager attention: the pattern ONNX Runtime's transformer optimiser fuses into its Attention kernel
        model = AutoModel.from_pretrained(str(model_folder), attn_implementation="eager").eval()
    keep = layer_count(model_folder, num_layers)
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    if layers is not None and keep < len(layers):  # as bert-score cuts a model at its tuned layer
        model.encoder.layer = torch.nn.ModuleList(list(layers)[:keep])
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


def fuse(path: Path, model_folder: Path) -> None:
    """ONNX Runtime's BERT optimiser, in place, for the model types it knows: embeddings + layer norm, attention,
    bias + GELU and skip + layer norm each become one fused CPU kernel (the arithmetic is unchanged: outputs move
    by float32 rounding). Any other graph is left as exported."""
    config = model_config(model_folder)
    kind = FUSED_TYPES.get(str(config.get("model_type")))
    if kind is None:
        return
    from onnxruntime.transformers import optimizer

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fused = optimizer.optimize_model(str(path), model_type=kind, num_heads=int(config["num_attention_heads"]),
                                         hidden_size=int(config["hidden_size"]), opt_level=0, use_gpu=False)
    fused.save_model_to_file(str(path))


def quantize(source: Path, target: Path) -> Path:
    """`target`: `source` with its matrix products' weights in int8, one scale per output channel, and activations
    quantised per batch (ONNX Runtime's dynamic quantisation). Per-tensor scales cost MiniLM's passage vectors up to
    0.25 of cosine; per-channel ones about 0.01 (0.985 at worst on MTRAG passages). Opt-in, its vectors kept apart."""
    if target.is_file():
        return target
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    partial = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # its advice to pre-process first concerns static quantisation
    try:
        quantize_dynamic(str(source), str(partial), weight_type=QuantType.QInt8, per_channel=True,
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})  # fused ops: types unknown
    finally:
        quiet.setLevel(level)
    os.replace(partial, target)
    return target
