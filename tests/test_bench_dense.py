"""bench_dense.py's simulated device: what stands for a GPU on a machine without one must behave like one; its host
side's and long documents' figures."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench_dense import HOST_BATCHES, SimulatedDevice, device_fed, host_side, long_documents  # noqa: E402

from ragjudge.embeddings.pipeline import TokenBatch  # noqa: E402


def test_the_simulated_device_computes_apart_from_the_host_for_its_batches_padded_tokens() -> None:
    device = SimulatedDevice(per_token=1e-4, dimension=4)  # 0.1 s for a batch of 2 x 500 tokens
    batch = TokenBatch(["a", "b"], np.ones((2, 500), np.int64), np.ones((2, 500), np.int64))
    device.fetch(device.launch(TokenBatch(["a"], np.ones((1, 1), np.int64), np.ones((1, 1), np.int64))))  # imports
    device.busy = 0.0
    started = time.perf_counter()
    handle = device.launch(batch)
    assert time.perf_counter() - started < 0.05  # launching returns at once, as on a GPU
    vectors = device.fetch(handle)
    assert time.perf_counter() - started >= 0.1 and vectors.shape == (2, 4)  # fetching waits for the batch
    assert device.first is not None and 0.1 <= device.busy < 1
    device.close()


def test_the_pipeline_feeding_a_simulated_device_reports_its_share_and_first_wait(tmp_path: Path) -> None:
    texts = [f"passage {i} " + "word " * (i % 90) for i in range(1500)]
    fed = device_fed(texts, str(tmp_path), rate=3000, rounds=1)  # 0.5 s of device time
    assert 0.2 < fed.share <= 1.05 and fed.rate == fed.share * 3000
    assert 0 <= fed.first_batch < len(texts) / fed.rate  # the device's first batch came before the run ended


def test_long_documents_are_joined_passages_tokenized_whole_and_cut_with_the_same_ids(tmp_path: Path) -> None:
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps({"_id": str(i), "title": "", "text": f"Passage {i}: " + "a fund's fees. " * 90})
                            + "\n" for i in range(40)), encoding="utf-8")
    long = long_documents(pool, size=5_000, rounds=1)
    assert long.count == 10 and long.chars > 5_000 and long.cut_at == 2_048  # 4 passages of 1,300 characters each
    assert long.same_ids == 10 and long.whole_rate > 0 and long.cut_rate > 0


def test_the_host_side_reports_the_encoder_ragjudge_s_tokenizing_and_the_pipeline_at_each_batch(tmp_path: Path) -> None:
    texts = [f"Passage {i}: The FUND's fees\nfell. " + "word " * (i % 120) + ("café" if i % 7 == 0 else "")
             for i in range(2500)]  # more than a tokenizer call: the pipeline's threads run; some texts non-ASCII
    host = host_side(texts, str(tmp_path), rounds=1)
    assert host.encoder_rate > 0 and host.encoder_cpu > 0 and host.tokenizing_rate > 0
    assert set(host.pipelines) == set(HOST_BATCHES)
    for figures in host.pipelines.values():
        assert figures.rate > 0 and figures.cpu > 0 and figures.writes >= 1
        assert set(figures.stages) == {"sort, batch, pad", "copy", "open the store, look up", "store"}
