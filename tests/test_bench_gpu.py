"""The prepared GPU check (`benchmarks/bench_gpu.py`) runs end to end, on the CPU (`--gpu cpu`): a session is lent a
GPU for 15 minutes at most, and a script that fails after the machine has started costs most of them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MTRAG = REPO.parent / "shared" / "data" / "mtrag"  # where the benchmarks read it


@pytest.mark.skipif(not (MTRAG / "corpus" / "fiqa_pool.jsonl").is_file(),
                    reason="the benchmarks read the shared MTRAG data at ../shared/data/mtrag, absent here")
def test_the_gpu_check_runs_on_the_cpu_with_the_model_alone_and_a_kernel_profile(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")} | {
        "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True", "RAGJUDGE_CACHE_DIR": str(tmp_path / "cache"),
        "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "benchmarks/bench_gpu.py", "--gpu", "cpu", "--tasks", "1", "--systems", "1",
                           "--passages", "60", "--cpu-passages", "30", "--model-alone", "40", "--profile", "20",
                           "--precisions", "auto"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    dense = [line for line in done.stdout.splitlines() if line.startswith("dense, GPU auto")]
    assert len(dense) == 1 and "the model alone" in dense[0], done.stdout
    assert re.search(r"identical top-10 for \d+/208 queries", dense[0]), dense[0]  # the count is the GPU's to tell
    assert "aten::addmm" in done.stdout  # the profile of the PyTorch forward pass, its matmuls first or near it
    assert re.search(r"the index's batches of 32: padding \d+\.\d% of the tokens, \d+\.\d% of the attention work "
                     r"\(each tokenizer call sorted alone, as before its sorting windows: \d+\.\d%, \d+\.\d%\)",
                     done.stdout), done.stdout
    bad = subprocess.run([sys.executable, "benchmarks/bench_gpu.py", "--gpu", "cpu", "--profile", "-1"], cwd=REPO,
                         env=env, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--profile must be 0 or more, not -1" in bad.stderr
