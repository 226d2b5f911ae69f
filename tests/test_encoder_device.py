"""`device: auto` for every local encoder: CUDA, else Apple MPS, else CPU; a named device as given; anything else
one error; the device a run used is in its run.json."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from conftest import MINI, run_cli
from pydantic import ValidationError

from ragjudge.bench.sentence_retrieval.specs import CrossEncoderOptions
from ragjudge.bench.sentence_retrieval.specs import DenseOptions as SentenceDenseOptions
from ragjudge.embeddings.device import GPU_DEVICE_FILES, check_device, resolve_device
from ragjudge.embeddings.onnx_encoder import onnxruntime_installed
from ragjudge.errors import UsageError
from ragjudge.retrieval.dense import DenseOptions
from ragjudge.retrieval.encoders import SentenceTransformerEncoder


def _machine(monkeypatch: pytest.MonkeyPatch, *, cuda: bool, mps: bool) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)


@pytest.mark.parametrize(("cuda", "mps", "expected"), [(True, True, "cuda"), (False, True, "mps"),
                                                         (False, False, "cpu")])
def test_auto_picks_cuda_then_mps_then_cpu(monkeypatch: pytest.MonkeyPatch, cuda: bool, mps: bool,
                                           expected: str) -> None:
    _machine(monkeypatch, cuda=cuda, mps=mps)
    assert resolve_device("auto") == resolve_device() == resolve_device(" AUTO ") == expected
    assert SentenceTransformerEncoder("minilm").device == expected  # the encoders' default is auto
    for named in ("cpu", "cuda", "cuda:1", "mps"):  # a named device is taken as given, whatever the machine
        assert resolve_device(named) == named


def test_bertscore_encoder_resolves_auto_and_keys_the_store_by_device_type(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    from ragjudge.embeddings.bertscore import resolve_model
    from ragjudge.embeddings.cached_bertscore import CachedBertScorer
    from ragjudge.embeddings.store import EmbeddingStore

    config = resolve_model("bundled")
    _machine(monkeypatch, cuda=True, mps=False)
    on_gpu = CachedBertScorer(config, store=EmbeddingStore(tmp_path))
    _machine(monkeypatch, cuda=False, mps=False)
    on_cpu = CachedBertScorer(config, store=EmbeddingStore(tmp_path))
    assert (on_gpu.device, on_cpu.device) == ("cuda", "cpu")
    assert on_gpu.cache is not None and on_cpu.cache is not None
    assert on_gpu.cache.key["device"] == "cuda" and on_cpu.cache.key["device"] == "cpu"


def test_rb_alg_takes_a_device_option(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ragjudge.judges.base import JudgeContext
    from ragjudge.judges.rb_alg import RBAlgJudge
    from ragjudge.judges.registry import JudgeRegistry

    spec = JudgeRegistry().spec("rb_alg")
    spec = spec.model_copy(update={"options": {**spec.options, "bertscore_model": "bundled"}})
    _machine(monkeypatch, cuda=True, mps=False)
    assert RBAlgJudge(spec).scorer_for(JudgeContext(use_cache=False)).device == "cuda"  # auto by default
    named = spec.model_copy(update={"options": {**spec.options, "device": "cpu"}})
    assert RBAlgJudge(named).scorer_for(JudgeContext(use_cache=False)).device == "cpu"
    with pytest.raises(UsageError, match="'gpu' is not one of"):
        RBAlgJudge(spec.model_copy(update={"options": {**spec.options, "device": "gpu"}}))


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "tpu", "", "cpu0"])
def test_a_bad_device_is_one_clear_error(bad: str) -> None:
    with pytest.raises(UsageError, match=r"is not one of auto, cpu, cuda, cuda:N or mps"):
        resolve_device(bad)
    with pytest.raises(UsageError):
        check_device(bad)
    for options in (DenseOptions, SentenceDenseOptions, CrossEncoderOptions):
        with pytest.raises(ValidationError, match=r"device: .* is not one of auto, cpu, cuda, cuda:N or mps"):
            options(device=bad)
    assert DenseOptions().device == CrossEncoderOptions().device == "auto"
    assert DenseOptions(device="CUDA:0").device == "cuda:0"


def test_a_bad_device_in_a_pipeline_spec_stops_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "gpu.yaml"
    spec.write_text("retriever:\n  name: dense\n  options:\n    model: minilm\n    device: gpu\n")
    code, _, stderr = run_cli(["eval", "--bench", str(MINI / "tasks.jsonl"), "--gen", "extractive",
                               "-T", "setting=rag", "--pipeline", str(spec), "--corpus", str(MINI / "corpus.jsonl"),
                               "--judges", "idk_lexical", "--out", str(tmp_path / "run")], monkeypatch, capsys)
    assert code == 2 and "'gpu' is not one of auto, cpu, cuda, cuda:N or mps" in stderr
    assert "Traceback" not in stderr


def test_a_dense_run_records_the_device_it_ran_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    _machine(monkeypatch, cuda=False, mps=False)  # this machine, whatever it has: auto falls back to the CPU
    out = tmp_path / "run"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning for the ordinary case of a machine without a GPU
        code, _, stderr = run_cli(["eval", "--bench", str(MINI / "tasks.jsonl"), "--gen", "extractive",
                                   "-T", "setting=rag", "--pipeline", "dense", "--corpus", str(MINI / "corpus.jsonl"),
                                   "--index-dir", str(tmp_path / "idx"), "--judges", "idk_lexical", "--out", str(out),
                                   "--format", "json"], monkeypatch, capsys)
    assert code == 0, stderr
    assert "warning" not in stderr.lower()
    retriever = json.loads((out / "run.json").read_text())["pipeline"]["retriever"]
    assert retriever["options"]["device"] == "auto" and retriever["device"] == "cpu"
    assert retriever["options"]["backend"] == "auto"
    assert retriever["backend"] == ("onnx" if onnxruntime_installed() else "torch")  # auto, as resolved


_WITHOUT_TORCH = """
import sys
from pathlib import Path
from ragjudge.embeddings.device import no_gpu_here, resolve_device
print(no_gpu_here(Path(sys.argv[1])), resolve_device("auto") if len(sys.argv) > 2 else "-", "torch" in sys.modules)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the driver's device files are Linux's")
def test_auto_answers_cpu_without_torch_where_no_gpu_driver_made_a_device_file(tmp_path: Path) -> None:
    """A model on ONNX Runtime needs no torch: on a machine whose /dev has no GPU driver's file, `auto` is the CPU
    and torch is never imported (1-2.5 s of start-up); one driver file and torch is asked as before."""
    def ask(dev: Path, resolve: bool = False) -> list[str]:
        done = subprocess.run([sys.executable, "-c", _WITHOUT_TORCH, str(dev), *(["resolve"] if resolve else [])],
                              capture_output=True, text=True, check=True)
        return done.stdout.split()

    assert ask(tmp_path) == ["True", "-", "False"]
    (tmp_path / "nvidiactl").touch()
    assert ask(tmp_path) == ["False", "-", "False"]
    if not any((Path("/dev") / name).exists() for name in GPU_DEVICE_FILES):  # this machine has no GPU driver
        assert ask(Path("/dev"), resolve=True) == ["True", "cpu", "False"]
