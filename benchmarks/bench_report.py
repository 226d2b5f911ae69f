"""`ragjudge report` on 1,000 synthetic MTRAG tasks × 4 judges (an RB_llm panel of three): build time and size.

Targets: built in under 10 s, under 15 MB. The synthetic run has MTRAG's shape and text lengths
(`ragjudge.testing.synthetic_mtrag`: 8-turn conversations carried whole in every task, 512-token passages
shared within a conversation, judge rationales and raw outputs). Baselines in the same run:
- size: the naive self-contained page, which inlines results.jsonl as it is;
- time: only reading and parsing results.jsonl (the floor any report pays).
With Chromium at /usr/bin/chromium (and Playwright), it also times opening the page until the task list is
drawn, a text search over every task, and opening a task.

Run: python benchmarks/bench_report.py [--tasks 1000] [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ragjudge.report import build_report
from ragjudge.testing.synthetic_mtrag import write_run

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def browser_timings(page_path: Path) -> dict[str, float] | None:
    if not CHROMIUM.exists():
        return None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        started = time.perf_counter()
        page.goto(page_path.as_uri())
        page.wait_for_selector("body[data-ready=true]", timeout=60_000)
        opened = time.perf_counter() - started
        page.click("#tab-tasks")
        started = time.perf_counter()
        page.fill("#f-q", "telescope bread")
        page.locator("#status", has_text="match").wait_for(timeout=60_000)  # the page's CSP forbids eval
        searched = time.perf_counter() - started - 0.15  # minus the typing debounce
        started = time.perf_counter()
        page.click("#task-table tbody tr th button")
        page.wait_for_selector("#detail-title", timeout=60_000)
        detail = time.perf_counter() - started
        rows = page.eval_on_selector_all("#task-table tbody tr", "rows => rows.length")
        browser.close()
    return {"open": opened, "search": searched, "detail": detail, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=1, help="Systems compared in one report (on the same tasks).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folders = [write_run(Path(tmp) / f"run{k}", args.tasks, system=k) for k in range(args.runs)]
        results = folders[0] / "results.jsonl"
        print(f"{args.tasks} synthetic MTRAG tasks × 4 judges (RB_llm panel of 3), {args.runs} run(s); "
              f"results.jsonl {results.stat().st_size / 1e6:.1f} MB each")

        started = time.perf_counter()
        records = [json.loads(line) for line in results.read_text().splitlines()]
        floor = time.perf_counter() - started
        naive = sum(len(json.dumps(r, ensure_ascii=False)) + 1 for r in records) * args.runs

        out = Path(tmp) / "report.html"
        started = time.perf_counter()
        built = build_report(folders, out)
        seconds = time.perf_counter() - started
        size = out.stat().st_size

        started = time.perf_counter()
        cli = subprocess.run([sys.executable, "-m", "ragjudge", "report", *map(str, folders), "--out",
                              str(Path(tmp) / "cli.html")], capture_output=True, text=True)
        cli_seconds = time.perf_counter() - started
        assert cli.returncode == 0, cli.stderr

        print(f"build (in process):       {seconds:6.2f} s   (target < 10 s)   reading results.jsonl alone: "
              f"{floor:.2f} s")
        print(f"`ragjudge report` (CLI):  {cli_seconds:6.2f} s   (with Python start-up and imports)")
        print(f"report size:              {size / 1e6:6.2f} MB  (target < 15 MB)   naive page inlining "
              f"results.jsonl: {naive / 1e6:.1f} MB, {naive / size:.1f}x larger")
        print(f"targets: time {'OK' if seconds < 10 else 'MISSED'}, size {'OK' if size < 15e6 else 'MISSED'}")
        timings = browser_timings(out)
        if timings is None:
            print("browser: skipped (no /usr/bin/chromium or playwright)")
        else:
            print(f"browser (Chromium headless): page ready {timings['open']:.2f} s, search over {built.n_tasks} "
                  f"tasks {timings['search']:.2f} s, open a task {timings['detail']:.2f} s; "
                  f"{timings['rows']} table rows in the DOM")


if __name__ == "__main__":
    main()
