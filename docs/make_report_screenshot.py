"""Make docs/report.png (and docs/report-overview.png): the `ragjudge report` of two examples/mini runs.

Runs, offline (the judge models are played by `ragjudge.testing.scripted_judges` behind the local
OpenAI-compatible test server; the generator is the extractive baseline):

    ragjudge eval --bench examples/mini --gen extractive --judges idk,rb_alg,rb_llm,rl_f \
        --judge-models openai/gpt-judge,openai/lenient,openai/strict --api-base <local server> \
        --out runs/report-demo/ref
    ragjudge eval ... -T setting=rag --pipeline bm25 --corpus examples/mini/corpus.jsonl --out runs/report-demo/rag
    ragjudge report runs/report-demo/ref runs/report-demo/rag --out runs/report-demo/report.html

then opens the report in headless Chromium (/usr/bin/chromium, through Playwright), opens one task and takes
the screenshots. Run from the repository root: python docs/make_report_screenshot.py
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from ragjudge.testing.mini_runs import make_mini_runs  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
TASK = "mini-c01::2"


def main() -> None:
    out = ROOT / "runs" / "report-demo"
    runs = make_mini_runs(out, judges="idk,rb_alg,rb_llm,rl_f")
    report = out / "report.html"
    subprocess.run([sys.executable, "-m", "ragjudge", "report", str(runs["ref"]), str(runs["rag"]), "--out",
                    str(report)], check=True)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 1200}, color_scheme="light")
        page.goto(report.resolve().as_uri() + "#task=" + TASK)
        page.wait_for_selector("body[data-ready=true]")
        # the detail scrolled to the runs side by side (answers, passages, judges), under the reference answer
        page.locator("#detail").evaluate("d => { d.scrollTop = d.querySelector('.runs').offsetTop - 260; }")
        page.screenshot(path=str(ROOT / "docs" / "report.png"))
        page.click("#tab-overview")
        page.screenshot(path=str(ROOT / "docs" / "report-overview.png"))
        browser.close()
    print(f"wrote docs/report.png and docs/report-overview.png from {report}")


if __name__ == "__main__":
    with ThreadPoolExecutor(1) as pool:  # the engine runs its own event loop; Playwright's sync API too
        pool.submit(main).result()
