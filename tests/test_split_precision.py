"""bf16x3: float32 linear layers as three bfloat16 products (`embeddings.split_precision`), checked on the CPU
through the same products computed in float32 (a GPU runs them as one bf16 matmul with float32 output)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ragjudge.embeddings import split_precision  # noqa: E402
from ragjudge.embeddings.split_precision import (Bf16x3Linear, LastSplit, matmul_kinds, split_into,  # noqa: E402
                                                  use_bf16x3)

from shared_data import SHARED_DATA  # noqa: E402  (tests/shared_data.py: the one locator for ../shared/data)

POOL = SHARED_DATA / "mtrag" / "corpus" / "clapnq_pool.jsonl"
FIXTURE_POOLS = Path(__file__).resolve().parent / "fixtures" / "mtrag" / "corpus"


def tf32(t: torch.Tensor) -> torch.Tensor:
    """`t` rounded to TF32's 10 mantissa bits, as a GPU's tensor cores read float32 in TF32 mode."""
    bits = t.contiguous().view(torch.int32)
    return ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


def test_a_split_is_the_bf16_rounding_then_the_rounded_remainder() -> None:
    rows = torch.randn(7, 12, generator=torch.Generator().manual_seed(0)) * 1000
    left = split_into(rows)
    assert left.dtype == torch.bfloat16 and left.shape == (7, 36)
    hi, again, lo = left[:, :12], left[:, 12:24], left[:, 24:]
    assert torch.equal(hi, rows.to(torch.bfloat16)) and torch.equal(again, hi)
    assert torch.equal(lo, (rows - hi.float()).to(torch.bfloat16))
    assert ((hi.double() + lo.double() - rows.double()).abs() <= rows.double().abs() * 2.0 ** -16).all()


@pytest.mark.parametrize("bias", [True, False])
def test_a_split_linear_layer_is_float32_accurate_where_tf32_and_bf16_are_not(bias: bool) -> None:
    torch.manual_seed(0)
    linear = torch.nn.Linear(384, 1536, bias=bias).requires_grad_(False)
    x = torch.randn(3, 50, 384)
    exact = x.double() @ linear.weight.double().t() + (linear.bias.double() if bias else 0)

    def error(out: torch.Tensor) -> float:
        return float((out.double() - exact).abs().max() / exact.abs().max())

    split = Bf16x3Linear(linear, (False, False), LastSplit())
    with torch.inference_mode():
        out = split(x)
        assert out.shape == (3, 50, 1536) and out.dtype == torch.float32
        in_tf32 = tf32(x) @ tf32(linear.weight).t() + (linear.bias if bias else 0)
        in_bf16 = x.bfloat16().float() @ linear.weight.bfloat16().float().t() + (linear.bias if bias else 0)
    assert error(out) < 2e-5
    assert error(in_tf32) > 20 * error(out) and error(in_bf16) > 200 * error(out)


def test_layers_reading_the_same_tensor_split_it_once_and_a_changed_tensor_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = split_precision.split_into
    monkeypatch.setattr(split_precision, "split_into", lambda rows: calls.append(rows.shape) or real(rows))
    splits = LastSplit()
    torch.manual_seed(1)
    q, k = (Bf16x3Linear(torch.nn.Linear(8, 8), (False, False), splits) for _ in range(2))
    x = torch.randn(4, 8)
    first = q(x), k(x)
    assert len(calls) == 1
    assert torch.equal(k(x.clone()), first[1]) and len(calls) == 2  # an equal tensor is another tensor
    y = torch.randn(4, 8)
    before = q(y)
    y.mul_(2)  # changed in place: its version moved on
    assert torch.allclose(k.splits.get(y).float()[:, :8], (2 * y / 2).bfloat16().float()) and len(calls) == 4
    assert torch.allclose(q(y), 2 * (before - q.bias) + q.bias, atol=1e-5) and len(calls) == 4


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import SentenceTransformer

    from ragjudge.embeddings.model_files import bundled_model_dir

    return lambda: SentenceTransformer(str(bundled_model_dir()), device="cpu")


def test_the_bundled_minilm_in_bf16x3_gives_float32_s_vectors_and_rankings(minilm, monkeypatch) -> None:
    pools = [POOL] if POOL.exists() else sorted(FIXTURE_POOLS.glob("*_pool.jsonl"))  # a fresh clone: our miniature
    passages = [json.loads(line)["text"] for pool in pools for line in pool.read_text().splitlines()][:96]
    queries = [p.split(".")[0] for p in passages[::8]]
    model = minilm()
    exact_p, exact_q = (model.encode(t, normalize_embeddings=True) for t in (passages, queries))
    assert use_bf16x3(model, "cpu") == 37  # six layers of six, and the pooler
    calls = []
    real = split_precision.split_into
    monkeypatch.setattr(split_precision, "split_into", lambda rows: calls.append(rows.shape) or real(rows))
    with torch.inference_mode():
        got_p = model.encode(passages, normalize_embeddings=True)
    assert len(calls) == 25 * -(-len(passages) // 32)  # query, key and value share one split in each layer
    got_q = model.encode(queries, normalize_embeddings=True)
    assert np.abs(got_p - exact_p).max() < 1e-5 and np.abs(got_q - exact_q).max() < 1e-5
    ranks = lambda q, p: np.argsort(-(q @ p.T), axis=1, kind="stable")  # noqa: E731
    assert (ranks(got_q, got_p) == ranks(exact_q, exact_p)).all()


def test_the_one_call_bf16_matmul_is_looked_for_on_cuda_only_and_a_failed_probe_means_not_here() -> None:
    assert matmul_kinds("cpu") == (False, False)
    if not torch.cuda.is_available():  # a CPU build raises on a CUDA tensor: the probe says no, it does not fail
        assert matmul_kinds("cuda") == (False, False) and not split_precision.runs_fast("cuda")
