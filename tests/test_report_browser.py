"""`ragjudge report` in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright): the report of
the examples/mini run and of a two-run comparison, offline, with no request leaving the page, no console error,
its content checked against the run files, keyboard use, both colour themes, and screenshots."""

from __future__ import annotations

import json
import re
import statistics
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ragjudge.report import build_report
from ragjudge.testing.mini_runs import make_mini_runs

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium; .ci/run does it)")
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is not installed (pip install -e '.[dev]')")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def mini(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("mini-runs")
    with ThreadPoolExecutor(1) as pool:  # Playwright's loop runs in this thread; the engine needs its own
        return pool.submit(make_mini_runs, out).result()


@pytest.fixture(scope="module")
def reports(mini: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("reports")
    single = build_report([mini["ref"]], out / "mini.html")
    pair = build_report([mini["ref"], mini["rag"]], out / "compare.html")
    assert single.n_tasks == pair.n_tasks == 40
    return {"single": single.path, "pair": pair.path}


class Watched:
    """A page in an offline context that records console errors and every request; only the report's own
    file (and the data: / blob: URLs a page makes in memory) may be asked for."""

    def __init__(self, browser, path: Path, *, color_scheme: str = "light"):
        self.context = browser.new_context(offline=True, viewport={"width": 1400, "height": 1000},
                                           color_scheme=color_scheme)
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.allowed = path.resolve().as_uri()
        if path.exists():
            self.page.goto(self.allowed)
            self.page.wait_for_selector("body[data-ready=true]", timeout=20_000)

    def _route(self, route) -> None:
        url = route.request.url
        if url.split("#")[0] == self.allowed or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def close(self) -> None:
        self.context.close()


def results(folder: Path) -> dict[str, dict]:
    return {r["task_id"].replace("<::>", "::"): r for r in map(json.loads, (folder / "results.jsonl").open())}


def test_the_request_watch_sees_requests_that_leave_the_page(browser, tmp_path: Path) -> None:
    """The check below could not fail if the watch saw nothing: a page that does fetch is caught."""
    page_file = tmp_path / "leaky.html"
    page_file.write_text('<!doctype html><img src="https://example.invalid/x.png"><body data-ready="true"></body>')
    watched = Watched(browser, page_file)
    watched.page.wait_for_timeout(200)
    assert watched.outside == ["https://example.invalid/x.png"]
    watched.close()


def test_mini_report_in_chromium(browser, mini: dict[str, Path], reports: dict[str, Path], tmp_path: Path) -> None:
    summary = json.loads((mini["ref"] / "summary.json").read_text())
    watched = Watched(browser, reports["single"])
    page = watched.page
    # overview: the task count and a metric value as summary.json has them
    assert page.inner_text("#task-count") == "40 tasks"
    row = page.locator("#panel-overview table").first.locator("tr", has=page.locator("th", has_text=re.compile(
        r"^RB_llm\b(?!_)")))
    assert f"{summary['metrics']['RB_llm']['value']:.3f}" in row.inner_text()
    assert "openai/lenient" in page.inner_text("#panel-overview")  # LLM usage and the judges' models
    page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)

    # tasks: the list is paged (50 rows at most), filters count what results.jsonl says
    page.click("#tab-tasks")
    assert page.inner_text("#status") == "40 of 40 tasks"
    rows = results(mini["ref"])
    unanswerable = sum(r["answerability"] == ["UNANSWERABLE"] for r in rows.values())
    page.locator("#facet-filters label", has_text="answerability").locator("select").select_option(label="UNANSWERABLE")
    assert page.inner_text("#status") == f"{unanswerable} of 40 tasks match the filters"
    page.click("#f-reset")
    page.fill("#f-q", "phobos deimos")
    page.locator("#status", has_text="match").wait_for()
    hits = sum(all(w in json.dumps(r).lower() for w in ("phobos", "deimos")) for r in rows.values())
    assert page.inner_text("#status") == f"{hits} of 40 tasks match the filters" and hits > 0
    page.click("#f-reset")

    # a task: the conversation, passages marked, the answer, each judge with its rationale, each panel member
    task = rows["mini-c01::2"]
    page.click("button[data-index='1']")
    detail = page.inner_text("#detail")
    member = task["ragjudge"]["judges"]["rb_llm"]["members"][0]
    assert member["rationale"].splitlines()[0] in detail
    assert task["predictions"][0]["text"] in detail and task["targets"][0]["text"] in detail
    assert "question under evaluation" in detail.lower() and page.locator("#detail .mark-reference").count() >= 1
    page.screenshot(path=str(tmp_path / "task.png"))
    assert (tmp_path / "task.png").read_bytes()[:4] == b"\x89PNG" and (tmp_path / "task.png").stat().st_size > 20_000

    assert watched.errors == [] and watched.outside == []
    watched.close()


def test_sorting_and_metric_filter(browser, mini: dict[str, Path], reports: dict[str, Path]) -> None:
    watched = Watched(browser, reports["single"])
    page = watched.page
    page.click("#tab-tasks")
    page.select_option("#f-metric", label="RB_llm")
    page.fill("#f-min", "0.6")
    values = [r["metrics"].get("RB_llm", [None])[0] for r in results(mini["ref"]).values()]
    expected = sum(v is not None and v >= 0.6 for v in values)
    assert page.inner_text("#status") == f"{expected} of 40 tasks match the filters"
    page.fill("#f-min", "")
    page.select_option("#f-sort", label="RB_llm")
    page.click("#f-order")  # descending
    headers = page.locator("#task-table thead th").all_inner_texts()
    assert "RB_llm ↓" in headers  # the sort metric is shown, marked as sorted
    n = headers.index("RB_llm ↓") + 1
    column = [c.strip() for c in page.locator(f"#task-table tbody tr > :nth-child({n})").all_inner_texts()]
    numbers = [float(c) for c in column if c != "–"]
    assert numbers == sorted(numbers, reverse=True) and numbers[0] == max(v for v in values if v is not None)
    assert watched.errors == []
    watched.close()


def test_keyboard_only(browser, reports: dict[str, Path]) -> None:
    watched = Watched(browser, reports["single"])
    page = watched.page
    page.focus("#tab-overview")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#tab-tasks", "aria-selected") == "true"
    assert page.locator("#panel-tasks").is_visible() and not page.locator("#panel-overview").is_visible()
    page.focus("#task-table tbody tr:first-child th button")
    page.keyboard.press("Enter")
    assert page.locator("#detail-title").inner_text() == "Task mini-c01::1"
    focused = page.locator(":focus")
    assert focused.get_attribute("id") == "detail-title"
    page.keyboard.press("j")  # next task
    assert page.locator("#detail-title").inner_text() == "Task mini-c01::2"
    page.keyboard.press("Tab")
    assert page.locator(":focus").count() == 1  # focus stays in the page, on something focusable
    # focus is visible: the focused control has an outline
    page.focus("#f-q")
    outline = page.locator("#f-q").evaluate("e => getComputedStyle(e).outlineStyle")
    assert outline not in ("none", "")
    assert watched.errors == []
    watched.close()


def test_dark_theme(browser, reports: dict[str, Path], tmp_path: Path) -> None:
    watched = Watched(browser, reports["single"], color_scheme="dark")
    page = watched.page
    background = page.locator("body").evaluate("e => getComputedStyle(e).backgroundColor")
    assert background == "rgb(13, 17, 23)"
    page.click("#theme")  # auto → light
    assert page.locator("body").evaluate("e => getComputedStyle(e).backgroundColor") == "rgb(255, 255, 255)"
    page.click("#theme")  # light → dark
    page.screenshot(path=str(tmp_path / "dark.png"), full_page=True)
    assert watched.errors == []
    watched.close()


def test_two_run_comparison_in_chromium(browser, mini: dict[str, Path], reports: dict[str, Path],
                                        tmp_path: Path) -> None:
    ref, rag = results(mini["ref"]), results(mini["rag"])
    # with -T setting=rag the contexts are what was retrieved; the task's references are kept for the report
    assert all(rag[t]["ragjudge"]["reference_contexts"] == ref[t]["contexts"] for t in ref)
    assert any(rag[t]["contexts"] != ref[t]["contexts"] for t in ref)
    metric = "RB_llm_idk"
    shared = [t for t in ref if metric in ref[t]["metrics"] and metric in rag[t]["metrics"]]
    diff = statistics.fmean(rag[t]["metrics"][metric][0] - ref[t]["metrics"][metric][0] for t in shared)
    watched = Watched(browser, reports["pair"])
    page = watched.page
    page.click("#tab-compare")
    panel = page.inner_text("#panel-compare")
    assert "rag vs ref" in panel and "Both runs recorded the same data hash." in panel
    row = page.locator("#panel-compare table").first.locator("tr", has=page.locator("th", has_text=metric))
    assert f"{diff:+.3f}" in row.inner_text()
    page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)

    # a task where they differ most opens side by side: each run's passages (retrieved ones marked), answers
    first = page.locator("#panel-compare button[data-task]").first
    task_id = first.inner_text()
    first.click()
    assert page.locator("#detail-title").inner_text() == f"Task {task_id}"
    columns = page.locator("#detail .run-col h3").all_inner_texts()
    assert columns == ["ref", "rag"]
    detail = page.inner_text("#detail")
    assert ref[task_id]["predictions"][0]["text"] in detail and rag[task_id]["predictions"][0]["text"] in detail
    assert page.locator("#detail .run-col").nth(1).locator(".mark-retrieved").count() >= 1 or \
        not rag[task_id]["contexts"]
    # the multi-run list: one column per run for the chosen metric, and their difference
    headers = page.locator("#task-table thead th").all_inner_texts()
    assert headers[3:6] == ["ref", "rag", "Δ"]
    assert page.inner_text("#task-table caption") == f"{metric} of each run (choose with Metric); Δ = rag − ref"
    page.screenshot(path=str(tmp_path / "compare-task.png"))
    assert watched.errors == [] and watched.outside == []
    watched.close()


def _eval_in_thread(args: list[str]) -> int | str | None:
    """`ragjudge ARGS` in a worker thread (the engine runs its own event loop; Playwright's sync API has one here)."""
    import sys

    from ragjudge.cli import main

    def run() -> int | str | None:
        saved, sys.argv = sys.argv, ["ragjudge", *args]
        try:
            main()
        except SystemExit as done:
            return done.code
        finally:
            sys.argv = saved
        return 0

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run).result()


def test_any_bench_renders_cxm_generic_records(browser, tmp_path: Path) -> None:
    """A bench with its own record shape (CXMArena prediction rows): the generic per-sample view in Chromium."""
    cxm = Path(__file__).resolve().parents[1] / "examples" / "cxm"
    out = tmp_path / "cxm"
    code = _eval_in_thread(["eval", "--bench", "cxm-intent", "--data", str(cxm), "-T",
                            f"predictions={cxm / 'predictions' / 'intent.jsonl'}", "--out", str(out)])
    assert code == 0 and (out / "results.jsonl").exists()
    report = build_report([out], tmp_path / "cxm.html")
    watched = Watched(browser, report.path)
    page = watched.page
    assert page.inner_text("#task-count") == f"{report.n_tasks} tasks" and report.n_tasks == 12
    assert "Per intent" in page.inner_text("#panel-overview")
    page.click("#tab-tasks")
    assert not page.locator("#f-spread").is_visible()  # no judge panel: no spread filter
    page.click("#task-table tbody tr:nth-child(5) th button")
    detail = page.inner_text("#detail")
    assert "Activating an eSIM" in detail and "openai/judge" in detail and "FIELDS" in detail.upper()  # the verifier
    page.screenshot(path=str(tmp_path / "cxm.png"))
    assert watched.errors == [] and watched.outside == []
    watched.close()
