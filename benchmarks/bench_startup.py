"""How long the command line takes to answer before it does any work, against `python -c pass` in the same run.

Issue 36: rejecting a bad argument took 1 to 1.6 s, `ragjudge schema summary` 5.5 s. Each command here runs
`--repeat` times in a fresh interpreter (the way a user types it); the median is reported beside the bare
interpreter's. The target is the issue's: `ragjudge --help`, an argument error and `import ragjudge` answer within
0.5 s (0.3 s for the import) on 2 cores, `benches` and `schema` too; exit 1 when one does not.

    python benchmarks/bench_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time

TARGETS = {  # label: (argv after the interpreter, seconds it must answer in; None: reported only)
    "python -c pass": (["-c", "pass"], None),
    "import ragjudge": (["-c", "import ragjudge"], 0.3),
    "ragjudge --help": (["-m", "ragjudge", "--help"], 0.5),
    "ragjudge eval --bogus (argument error)": (["-m", "ragjudge", "eval", "--bogus"], 0.5),
    "ragjudge eval --help": (["-m", "ragjudge", "eval", "--help"], 0.5),
    "ragjudge schema summary": (["-m", "ragjudge", "schema", "summary"], 0.5),
    "ragjudge benches": (["-m", "ragjudge", "benches"], 0.5),
}


def median_seconds(argv: list[str], repeat: int) -> float:
    env = {**os.environ, "COLUMNS": "80"}
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run([sys.executable, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    if shutil.which("ragjudge") is None:
        print("ragjudge is not installed in this interpreter's environment", file=sys.stderr)
        return 2
    bare = median_seconds(TARGETS["python -c pass"][0], args.repeat)
    failed = []
    print(f"{'command':42} {'median s':>9} {'x bare':>7}  target")
    for label, (argv, budget) in TARGETS.items():
        seconds = bare if label == "python -c pass" else median_seconds(argv, args.repeat)
        verdict = "-" if budget is None else (f"< {budget} s ok" if seconds < budget else f"< {budget} s FAILED")
        if budget is not None and seconds >= budget:
            failed.append(label)
        print(f"{label:42} {seconds:9.3f} {seconds / bare:7.1f}  {verdict}")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
