"""Two real runs of the examples/mini bench for report tests and the README screenshot, offline: the extractive
generator from the reference passages (`ref`) and from the top 5 BM25 passages (`rag`), judged by
`scripted_judges.judge_panel` behind the local server (rationales, raw output, a disagreeing and flaky panel).
"""

from __future__ import annotations

from pathlib import Path

from ragjudge.testing.conformance.cli import run_cli
from ragjudge.testing.openai_server import OpenAIServer
from ragjudge.testing.scripted_judges import judge_panel

MINI = Path(__file__).resolve().parents[2] / "examples" / "mini"
PANEL = ("openai/gpt-judge", "openai/lenient", "openai/strict")
BIASES = {"lenient": 1, "strict": -2}


def eval_args(name: str, out: Path, api_base: str, judges: str = "idk,idk_lexical,rb_llm") -> list[str]:
    """`ragjudge eval` arguments for the `ref` or `rag` run."""
    args = ["eval", "--bench", str(MINI), "--gen", "extractive", "--judges", judges, "--judge-models",
            ",".join(PANEL), "--api-base", api_base, "--out", str(out / name)]
    if name == "rag":
        args += ["-T", "setting=rag", "--pipeline", "bm25", "--corpus", str(MINI / "corpus.jsonl"),
                 "--index-dir", str(out / "indexes")]
    return args


def make_mini_runs(out: Path, *, judges: str = "idk,idk_lexical,rb_llm") -> dict[str, Path]:
    """Run `ref` and `rag` in this process (through the CLI entry point) into `out`; returns their folders.

    Call it from a thread without a running event loop (the engine runs its own)."""
    out.mkdir(parents=True, exist_ok=True)
    env = {"OPENAI_API_KEY": "sk-test-local", "RAGJUDGE_CACHE_DIR": str(out / "cache")}
    with OpenAIServer(judge_panel(BIASES, flaky_model="strict")) as server:
        for name in ("ref", "rag"):
            done = run_cli([*eval_args(name, out, server.base_url, judges), "--format", "json"], env, offline=False)
            if done.code not in (0, 1) or not (out / name / "results.jsonl").exists():  # 1: a judgement failed
                raise RuntimeError(f"ragjudge eval ({name}) exited {done.code} without results: {done.err}")
    return {"ref": out / "ref", "rag": out / "rag"}
