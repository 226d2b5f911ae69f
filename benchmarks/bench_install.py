"""How long `pip install -e .` takes to resolve in a fresh virtual environment, and whether pip backtracks.

Issue 36: with loose bounds pip walked back through dozens of openai, instructor and langchain-core releases ("pip is
looking at multiple versions of ...", 65 openai wheels downloaded) before settling: minutes of a new user's first
hour. This makes a fresh venv, installs torch==2.13.0 first (as the README says), then asks pip to resolve the
project with `--dry-run --report` and fails (exit 1) when pip printed a backtracking line, downloaded two versions of
one package, or took longer than `--budget` seconds.

    python benchmarks/bench_install.py [--budget 240]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=240.0, help="seconds the resolution may take")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragjudge-install-") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip"]
        subprocess.run([*pip, "install", "-q", "torch==2.13.0"], check=True)
        report = Path(tmp) / "report.json"
        started = time.perf_counter()
        done = subprocess.run([*pip, "install", "--dry-run", "--report", str(report), "-e", str(REPO)],
                              capture_output=True, text=True)
        seconds = time.perf_counter() - started
        resolved = len(json.loads(report.read_text())["install"]) if done.returncode == 0 and report.exists() else 0
    output = done.stdout + done.stderr
    backtracking = sorted(set(re.findall(r"looking at multiple versions of ([\w.-]+)", output)))
    downloads = re.findall(r"Downloading ([\w.-]+?)-(\d[\w.!+]*?)-", output)
    versions: dict[str, set[str]] = {}
    for name, version in downloads:
        versions.setdefault(name.lower().replace("_", "-"), set()).add(version)
    several = {n: sorted(v) for n, v in versions.items() if len(v) > 1}
    print(f"resolution: {seconds:.1f} s (budget {args.budget:.0f} s), {resolved} packages to install, exit "
          f"{done.returncode}")
    print(f"backtracking: {', '.join(backtracking) or 'none'}")
    print(f"packages downloaded in several versions: {several or 'none'}")
    ok = done.returncode == 0 and not backtracking and not several and seconds <= args.budget
    if done.returncode != 0:
        print(output[-2000:])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
