"""Peak memory of reading a JSONL file that holds one 50 MB line (a pasted document, a runaway generation).

Each measurement runs in a fresh process and is reported above the same measurement on the file without the
big line:
- reading: ragjudge's `read_jsonl` (streams lines as bytes, decodes one line at a time) vs the way it read
  before (`readlines()` of the whole file, then `json.loads` per line): peak Python heap (tracemalloc), which
  includes the parsed rows kept (the big string itself, 1x);
- `ragjudge judge --judges idk_lexical` end to end (read, judge, journal, results.jsonl/csv/parquet): peak RSS.
Text is realistic (words of the MTRAG example corpus).

Target: reading takes no more than a few times the line's size (the parsed records themselves are 1x). Run: python benchmarks/bench_big_line.py [--mb 50]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

READERS = {
    "ragjudge read_jsonl": "from ragjudge.formats.jsonl import read_jsonl\nrows = list(read_jsonl(path))",
    "readlines + json.loads (before)": (
        "import json\nwith open(path, encoding='utf-8') as fh:\n    lines = fh.readlines()\n"
        "rows = [json.loads(line) for line in lines if line.strip()]"),
}
PEAK = "print(tracemalloc.get_traced_memory()[1] // 1000)"


def big_text(mb: float) -> str:
    words = (REPO / "examples" / "mini" / "corpus.jsonl").read_text(encoding="utf-8").split()
    rng = random.Random(0)
    size = int(mb * 1_000_000)
    parts, total = [], 0
    while total < size:
        word = rng.choice(words)
        parts.append(word)
        total += len(word) + 1
    return " ".join(parts)[:size]


def peak_kb(code: str, path: Path) -> int:
    script = f"path = {str(path)!r}\nimport ragjudge.formats.jsonl, json, tracemalloc\ntracemalloc.start()\n{code}\n{PEAK}"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)})
    return int(out.stdout.strip().splitlines()[-1])


def cli_peak_kb(args: list[str]) -> int:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    script = ("import sys, resource\nfrom ragjudge.cli import main\nsys.argv = ['ragjudge', *sys.argv[1:]]\n"
              "try:\n    main()\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n"
              "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)")
    out = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    return int(out.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=float, default=50.0)
    args = parser.parse_args()
    text = big_text(args.mb)
    tasks = [json.loads(line) for line in (REPO / "examples" / "mini" / "tasks.jsonl").read_text().splitlines()[:20]]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        small, big = folder / "small.jsonl", folder / "big.jsonl"
        rows = [{**t, "predictions": [{"text": "An answer of ordinary length."}]} for t in tasks]
        small.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        rows[1]["predictions"] = [{"text": text}]
        big.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        line_mb = len(json.dumps(rows[1]).encode()) / 1e6
        print(f"file: {big.stat().st_size / 1e6:.1f} MB, of which one line of {line_mb:.1f} MB "
              f"({len(text.split()):,} words)")
        for name, code in READERS.items():
            extra = (peak_kb(code, big) - peak_kb(code, small)) / 1000
            print(f"{name:34s} peak heap above baseline {extra:7.1f} MB = {extra / line_mb:4.1f}x the line")
        many = folder / "many.jsonl"  # the same bytes as ordinary lines: streaming holds one line at a time
        chunk = 5_000
        with many.open("w", encoding="utf-8") as fh:
            for i in range(0, len(text), chunk):
                fh.write(json.dumps({"id": i, "text": text[i:i + chunk]}) + "\n")
        size_mb = many.stat().st_size / 1e6
        print(f"file: {size_mb:.1f} MB of {len(text) // chunk:,} ordinary lines")
        for name, code in READERS.items():
            extra = (peak_kb(code, many) - peak_kb(code, small)) / 1000
            print(f"{name:34s} peak heap above baseline {extra:7.1f} MB = {extra / size_mb:4.1f}x the file")
        base = cli_peak_kb(["judge", str(small), "--judges", "idk_lexical", "--out", str(folder / "s" / "x.jsonl"),
                            "--format", "json"])
        peak = cli_peak_kb(["judge", str(big), "--judges", "idk_lexical", "--out", str(folder / "b" / "x.jsonl"),
                            "--format", "json"])
        extra = (peak - base) / 1000
        print(f"{'ragjudge judge (idk_lexical)':34s} peak RSS above baseline {extra:7.1f} MB = {extra / line_mb:4.1f}x "
              f"the line (baseline {base / 1000:.0f} MB)")


if __name__ == "__main__":
    main()
