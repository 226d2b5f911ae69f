"""`ragjudge cxm fetch` on a machine that cannot reach the Hugging Face Hub: the machine or the network said no,
so one line naming the hub and where to get the data by hand, exit 3 (not 2, which means "fix your input")."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from ragjudge.bench.cxm.hub import REPO, fetch
from ragjudge.errors import EnvironmentFault, RagjudgeError


def _cached_locally() -> bool:
    """Whether this machine's Hugging Face caches already hold the release (offline mode would then read it)."""
    from datasets import config
    from huggingface_hub import constants

    return (Path(constants.HF_HUB_CACHE) / "datasets--sprinklr-huggingface--CXM_Arena").exists() or \
        (Path(config.HF_DATASETS_CACHE) / "sprinklr-huggingface___cxm_arena").exists()


def test_offline_mode_without_the_data_is_exit_3_in_one_line(tmp_path, monkeypatch, capsys) -> None:
    """The suite runs with HF_HUB_OFFLINE=1 (conftest): for the hub, exactly a machine without network."""
    if _cached_locally():
        pytest.skip("this machine's Hugging Face cache holds CXM_Arena: offline mode would read it")
    code, out, err = run_cli(["cxm", "fetch", "--out", str(tmp_path / "cxm"), "--task", "quality"], monkeypatch,
                             capsys)
    assert code == 3 and out == "", err
    [line] = err.strip().splitlines()
    assert line.startswith("error: cannot reach the Hugging Face Hub at ") and REPO in line
    assert "HF_HUB_OFFLINE is set" in line and "ragjudge cxm fetch --out DIR" in line and "--data" in line
    assert not list((tmp_path / "cxm").rglob("*.jsonl"))


def test_a_hub_that_refuses_the_connection_is_exit_3_at_once(tmp_path: Path) -> None:
    """With the network on (HF_HUB_OFFLINE=0) and the hub at a closed port. A subprocess: huggingface_hub reads
    HF_ENDPOINT and HF_HUB_OFFLINE when it is imported, and this is the exit code and stderr a shell sees (the
    `datasets` library's own retries would print a line each)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "0", "HF_ENDPOINT": f"http://127.0.0.1:{port}",
           "HF_HOME": str(tmp_path / "hf")}
    env.pop("HF_HUB_CACHE", None)
    env.pop("HF_DATASETS_CACHE", None)
    done = subprocess.run([sys.executable, "-m", "ragjudge", "cxm", "fetch", "--out", str(tmp_path / "cxm")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 3, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"error: cannot reach the Hugging Face Hub at http://127.0.0.1:{port} to fetch {REPO}: ")
    assert "Connection refused" in line
    assert line.endswith(f"; get it where there is network (`ragjudge cxm fetch --out DIR`, or "
                         f"http://127.0.0.1:{port}/datasets/{REPO}) and pass that folder with --data")
    assert done.stdout == "" and not list((tmp_path / "cxm").rglob("*.jsonl"))


def test_only_an_unreachable_hub_is_the_machine(tmp_path: Path) -> None:
    def dropped(repo: str, config: str):
        raise ConnectionError(f"Couldn't reach '{repo}' on the Hub (ConnectError)")

    def broken(repo: str, config: str):
        raise ValueError("Config name is missing")

    with pytest.raises(EnvironmentFault, match=r"^cannot reach the Hugging Face Hub at .* config Tool_Calling"):
        fetch(tmp_path, ["Tool_Calling"], load=dropped)
    with pytest.raises(RagjudgeError, match=r"could not load .* config Tool_Calling: Config name is missing") as info:
        fetch(tmp_path, ["Tool_Calling"], load=broken)
    assert not isinstance(info.value, EnvironmentFault)
