"""Output that reads well at 80 columns and in a pipe: no line wider than the terminal, nothing cut with `…`,
a legend and a headline under the main table, LLM usage rows that name their model in full, correlation
tables whose confidence intervals are whole, help screens without `<bool>` or `<list[str]>`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import MINI, run_cli

FIXTURES = Path(__file__).parent / "fixtures" / "inspectorraget"


def _fits(text: str, width: int = 80) -> None:
    wide = [line for line in text.splitlines() if len(line.rstrip()) > width]
    assert not wide, f"{len(wide)} line(s) wider than {width}: {wide[:3]}"
    assert "…" not in text, [line for line in text.splitlines() if "…" in line][:3]


@pytest.fixture(autouse=True)
def _eighty_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("LINES", "50")


def test_main_table_has_a_legend_and_a_headline(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)  # short paths: a path longer than the terminal wraps, whatever we do
    code, out, err = run_cli(["eval", "--bench", str(MINI), "--gen", "extractive", "--out", "run"],
                             monkeypatch, capsys)
    assert code == 0, err
    _fits(out)
    _fits(err)
    lines = out.splitlines()
    legend_at = lines.index("↑ higher is better, ↓ lower is better, · neither; n: samples with a value.")
    legend = "\n".join(lines[legend_at:legend_at + 20])
    for metric in ("idk_lexical", "RB_agg", "RougeL_stemFalse", "BertscoreR", "BertKPrec", "RB_agg_idk",
                   "answerability_acc"):
        assert re.search(rf"^[↑↓·] {re.escape(metric)}\s{{2,}}\S", legend, re.MULTILINE), f"{metric} has no legend line"
    assert "n counts only tasks with passages" in legend  # why BertKPrec's n is 31, not 40
    assert "conversational turns (left out, as in the paper)" in legend  # why *_idk's n is 37
    assert re.search(r"^· idk_lexical ", legend, re.MULTILINE)  # a rate: neither better nor worse
    assert re.search(r"^ idk_lexical\s+·\s+0\.450\s+40\s+0\s*$", out, re.MULTILINE)  # arrow, n and errors in the table
    assert lines[-1] == "RB_agg_idk 0.541, answerability_acc 0.757 over 37 tasks"
    paths = [line for line in err.splitlines() if line.startswith(("results:", "summary:", "table:"))]
    assert [p.split()[0] for p in paths] == ["results:", "summary:", "table:"]  # one path a line, labels whole


def test_llm_usage_rows_name_each_model_in_full_at_80_columns(tmp_path, llm_server, monkeypatch, capsys) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    long_a = "openai/generator-model-with-a-rather-long-name-a"
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["eval", "--bench", str(MINI), "--gen", long_a, "--api-base", llm_server.base_url,
                            "--judges", "idk_lexical", "--limit", "3", "--out", "run"], monkeypatch, capsys)
    assert code == 0, err
    _fits(err)
    lines = err.splitlines()
    at = lines.index(long_a)  # the model's full name on its own line, its figures under it
    assert lines[at - 2].startswith("LLM usage") and "prompt tok" in lines[at - 1]
    assert re.fullmatch(r"\s+3\s+0\s+0\s+0\s+[\d,]+\s+[\d,]+\s+0\.0000", lines[at + 1]), lines[at + 1]


def test_usage_lines_keep_short_names_on_one_line() -> None:
    from ragjudge.engine.render import usage_lines
    from ragjudge.llm.usage import ModelUsage

    short = usage_lines({"openai/gpt-4o": ModelUsage(calls=1200, prompt_tokens=1_234_567, cost=1.5)}, 80)
    assert short[0] == "LLM usage" and short[2].startswith("openai/gpt-4o  ") and "1,234,567" in short[2]
    long = usage_lines({"watsonx/meta-llama/llama-3-3-70b-instruct": ModelUsage(calls=3),
                        "anthropic/claude-3-5-haiku-20241022": ModelUsage(calls=4)}, 80)
    assert long[2] == "anthropic/claude-3-5-haiku-20241022" and long[4] == "watsonx/meta-llama/llama-3-3-70b-instruct"
    assert all(len(line) <= 80 for line in long)


def test_correlate_confidence_intervals_are_whole_at_80_columns(monkeypatch, capsys) -> None:
    code, out, err = run_cli(["correlate", str(FIXTURES / "human_eval.json"), "--bootstrap", "100", "--members"],
                             monkeypatch, capsys)
    assert code == 0, err
    _fits(out)
    intervals = re.findall(r"\[[+-]\d\.\d\d,[+-]\d\.\d\d\]", out)
    assert len(intervals) == 7 * 4  # every judge (4 + 3 panel members) x every human dimension
    assert "panel_rating[judge-x]" in out  # names with brackets are text, not markup


@pytest.mark.parametrize("command", [[], ["eval"], ["judge"], ["retrieve"], ["retrieval-eval"], ["correlate"],
                                     ["export"], ["benches"], ["benches", "show"], ["cxm"], ["cxm", "score"],
                                     ["cxm", "fetch"], ["report"], ["dialsim"],
                                     ["dialsim", "convert"], ["dialsim", "score"]])
def test_help_screens_are_plain_and_fit_80_columns(command: list[str], monkeypatch, capsys) -> None:
    code, out, err = run_cli([*command, "--help"], monkeypatch, capsys)
    assert code == 0, err
    _fits(out)
    assert "<bool>" not in out and "list[" not in out, out
    assert "Usage:" in out


def test_one_cdr_run_is_one_screenful_of_figures(tmp_path, monkeypatch, capsys) -> None:
    """Issue 36: one CDR run printed 289 lines (a legend line per cut-off, paper tables cut into "(continued)"
    parts). The cut-off figures are one grid, the other figures a small table under it, each paper table fits 80
    columns whole, and the legend says each family once."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(["eval", "--bench", "cdr", "--data", str(Path(__file__).parents[1] / "examples" /
                                                                       "cdr-mini"),
                              "--pipeline", "bm25", "-T", "unit=session", "--out", "run"], monkeypatch, capsys)
    assert code == 0, err
    _fits(out)
    assert "(continued)" not in out
    assert len(out.splitlines()) < 170, len(out.splitlines())
    lines = out.splitlines()
    grid = next(i for i, line in enumerate(lines) if line.split()[:5] == ["metric", "@1", "@5", "@10", "@20"])
    assert lines[grid + 2].split() == ["hit", "↑", "0.500", "0.700", "1.000", "1.000"]
    assert sum(line.startswith("↑ hit@") for line in lines) == 1  # hit@k's meaning, once
    assert any(line.split()[:2] == ["ingestion_s", "↓"] for line in lines)  # the figures that have no cut-off
    assert any(line.lstrip().startswith("Voyage-3-large (API)") for line in lines)


def test_legend_joins_the_cut_offs_of_one_meaning() -> None:
    from ragjudge.engine.render import legend
    from ragjudge.engine.summary import Metric

    def metric() -> Metric:
        return Metric(value=0.5, n=3, description="recall at k", higher_is_better=True, kind="score")

    metrics = {"R@1": metric(), "R@5": metric(), "MRR": metric(), "P@1": metric()}  # same words: only R's join
    assert [row[0] for row in legend(metrics)] == ["↑ R@1, @5", "↑ MRR", "↑ P@1"]
