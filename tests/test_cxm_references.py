"""CXMArena's paper figures beside ours only under the exact conditions they were measured under (issue 23): the
model by exact name or the explicit alias table, the retriever, chunk size, k, query formation, judge and protocol;
a run that matches no cell gets none and one note line saying why, never a nearby cell; the paper's percentages as
fractions, our unit. Answer classification retrieves as multi-turn retrieval does (same options, same code), so
Table 7's setup is the one command `ragjudge benches show cxm-answer-classification` documents, run here through
the local OpenAI-compatible server. The KB baseline's analysis figures are named as the baseline's."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import conftest
import pytest

from ragjudge.bench.cxm import paper as T
from ragjudge.bench.cxm import references as R
from ragjudge.bench.cxm.answer_classification import paper as table7
from ragjudge.bench.cxm.article_search import paper as table6
from ragjudge.bench.cxm.intent import paper as table4
from ragjudge.bench.cxm.kb_refinement import paper as table2
from ragjudge.bench.cxm.multiturn_retrieval import paper as table8
from ragjudge.bench.cxm.quality import paper as table5
from ragjudge.bench.cxm.tool_calls import paper as table9
from ragjudge.bench.cxm.retrieve import chunking_for, pipeline_for
from ragjudge.retrieval.spec import PipelineSpec, RetrieverSpec
from ragjudge.testing import cxm_synth
from ragjudge.testing.openai_server import OpenAIServer, Request

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cxm"
NONE = R.NONE_SHOWN


def run_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *args: str) -> tuple[int, str, str]:
    return conftest.run_cli(list(args), monkeypatch, capsys)


def values(summary: dict) -> dict:
    return {name: m["value"] for name, m in summary["metrics"].items()}


def why(summary: dict) -> str:
    """The one note line of a run no paper figure describes."""
    [line] = [n for n in summary["notes"] if n.startswith(NONE)]
    return line


# -- the paper's figures, in our unit --------------------------------------------------------------------------

def test_the_papers_percentages_are_fractions_as_ours() -> None:
    """Tables 4, 5, 7 and 9 print percent with up to two decimals ("30.13"); we print fractions ("0.301")."""
    assert T.TABLE4_INTENT["GPT-4.1"] == (0.3013, 0.7089, 0.4688)
    assert T.TABLE4_INTENT["Qwen-2.5-7B-Instruct"][2] == 0.287
    assert T.TABLE5_QUALITY["GPT-4.1"] == (0.324, 0.861)
    assert T.TABLE7_CLASSES["GPT-4o"] == (0.5, 0.04, 0.24, 0.22)
    assert T.TABLE9_TOOLS["gpt-4o-mini"][16] == 0.5746 and T.TABLE9_TOOLS["Gemini 1.5 Pro"][128] == 0.3531
    tables = [T.TABLE2_KB, T.TABLE4_INTENT, T.TABLE5_QUALITY, T.TABLE7_CLASSES]
    figures = [v for table in tables for row in table.values() for v in row]
    figures += [*T.TABLE6_SEARCH.values(), *T.TABLE8_RETRIEVAL.values()]
    figures += [v for row in T.TABLE9_TOOLS.values() for v in row.values()]
    assert figures and all(0 <= v <= 1 for v in figures)


# -- exact conditions ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, rows, expected", [
    ("openai/gpt-4.1", T.TABLE4_INTENT, "GPT-4.1"),
    ("azure/gpt-4.1-mini", T.TABLE4_INTENT, "GPT-4.1 mini"),  # a route, then the exact name
    ("gpt-4.1-mini", T.TABLE5_QUALITY, "GPT-4.1 mini"),
    ("gpt-4.1-2025-04-14", T.TABLE4_INTENT, "GPT-4.1"),  # the snapshot gpt-4.1 named when the paper ran
    ("gemini/gemini-2.0-flash-001", T.TABLE7_CLASSES, "Gemini 2.0 Flash"),
    ("hosted_vllm/Qwen/Qwen2.5-14B-Instruct", T.TABLE5_QUALITY, "Qwen-2.5-14B-Instruct"),
    ("openai/GPT-4o", T.TABLE9_TOOLS, "gpt-4o"),
    ("gpt-4o-mini", T.TABLE7_CLASSES, None),  # Table 7 has GPT-4o, not its mini
    ("gemini/gemini-2.0-flash-lite", T.TABLE4_INTENT, None),  # a nearby name is not the paper's model
    ("gpt-4.1-mini-high", T.TABLE4_INTENT, None),
    ("openai/gpt-4o-2024-08-06", T.TABLE7_CLASSES, None),  # the paper names no snapshot of GPT-4o
    ("qwen2.5-7b", T.TABLE4_INTENT, None),
    (None, T.TABLE4_INTENT, None),
])
def test_models_are_matched_by_exact_name_or_the_alias_table(name, rows, expected) -> None:
    assert R.paper_row(name, rows) == expected


def spec(retriever: str, **options) -> PipelineSpec:
    return PipelineSpec(name="x", retriever=RetrieverSpec(name=retriever, options=options))


@pytest.mark.parametrize("pipeline, expected", [
    (spec("bm25"), T.BM25),
    (pipeline_for("dense_ada002"), T.ADA),
    (pipeline_for("intfloat/multilingual-e5-large-instruct"), "multilingual-e5-large-instruct"),
    (spec("dense", encoder="litellm", model="azure/text-embedding-3-large"), "text-embedding-3-large"),
    (spec("hybrid", retrievers=[{"retriever": "bm25"}, {"retriever": "dense", "options": {
        "encoder": "litellm", "model": "openai/text-embedding-ada-002"}}]), T.ADA_BM25),
    (pipeline_for("hybrid"), None),  # BM25 and MiniLM: not the paper's hybrid
    (pipeline_for("dense"), None), (pipeline_for("minilm"), None),
    (spec("dense", model="text-embedding-3-small"), None),
])
def test_the_retriever_is_the_papers_by_exact_name(pipeline: PipelineSpec, expected: str | None) -> None:
    assert R.retriever_of(pipeline)[0] == expected


def test_a_matching_cell_only_never_a_nearby_one() -> None:
    """Table 6 has BM25 over chunks of 500 only; Table 8 reports k = 10 and 20 only; Table 2 the predictor's
    threshold and k only: a run beside one of them gets nothing, and one line naming each condition that differs."""
    metrics = {"hit@10 (official: top-10 passages, repeats removed)": 0.4}
    bm25 = spec("bm25")
    shown = table6.beside(bm25, chunking_for(bm25, 500), [1, 10], False, False, metrics)
    [ref] = shown.references
    assert shown.notes == [] and ref.unit == "fraction" and ref.source == f"{T.PAPER}, Table 6"
    assert ref.rows == [["retrieval precision (hit@10)", 0.42, 0.4]] and ref.columns == ["figure", "paper", "ours"]
    for chunk, overlap, ks, partial, differs in (
            (1000, None, [10], False, "this run: BM25, chunks of 1000 characters overlapping by 100"),
            (500, 50, [10], False, "this run: BM25, chunks of 500 characters overlapping by 50"),
            (0, None, [10], False, "this run: BM25, whole articles"),
            (500, None, [1, 5], False, "the paper's precision is at 10; this run -T ks=1,5"),
            (500, None, [10], True, "this run stops at --limit")):
        shown = table6.beside(bm25, chunking_for(bm25, chunk, overlap), ks, False, partial, metrics)
        assert shown.references == [] and len(shown.notes) == 1 and shown.notes[0].startswith(NONE)
        assert differs in shown.notes[0]
    ada = pipeline_for("dense_ada002")
    llm = R.QueryFormation("llm")
    recall = {"R@10 (paper protocol)": 0.3, "R@20 (paper protocol)": 0.4, "R@15 (paper protocol)": 0.35}
    [ref] = table8.beside(ada, chunking_for(ada, 500), [10, 15, 20], llm, False, False, recall).references
    assert ref.rows == [["average recall @10", 0.26, 0.3], ["average recall @20", 0.35, 0.4]]  # no "@15" cell
    shown = table8.beside(ada, chunking_for(ada, 500), [15], llm, False, False, recall)
    assert shown.references == [] and "Table 8 reports k = 10 and 20; this run -T ks=15" in shown.notes[0]
    shown = table8.beside(ada, chunking_for(ada, 500), [10], R.QueryFormation("llm", official_prompt=False), False,
                        False, recall)
    assert shown.references == [] and "the query-formation prompt is overridden (--judge-dir)" in shown.notes[0]
    kb = {"similar precision": 0.8, "similar recall": 0.2, "similar F1": 0.32}
    [ref] = table2.beside("openai/text-embedding-3-large", 0.9, 4, False, kb).references
    assert ref.rows == [["similar precision", 0.85, 0.8], ["similar recall", 0.18, 0.2], ["similar F1", 0.29, 0.32]]
    shown = table2.beside("openai/text-embedding-3-large", 0.85, 4, False, kb)
    assert shown.references == [] and shown.notes == [
        (f"{NONE}the paper's baseline is CXMArena's predictor's (threshold 0.9, 4 neighbours); this run "
         "-T threshold=0.85 -T k=4")]


def test_every_table_is_keyed_by_its_conditions() -> None:
    accuracy = {"taxonomy_1": 0.31, "taxonomy_2": 0.7, "flat": 0.5}
    [ref] = table4.beside("openai/gpt-4.1", False, False, accuracy).references
    assert ref.rows == [["accuracy, Taxonomy A (taxonomy_1)", 0.3013, 0.31],
                        ["accuracy, Taxonomy B (taxonomy_2)", 0.7089, 0.7]]
    assert "Table 4 reports GPT-4.1, " in why({"notes": table4.beside("openai/gpt-4.1-turbo", False, False,
                                                               accuracy).notes})
    assert "taxonomies are the release's" in table4.beside("gpt-4.1", False, False, {"flat": 0.5}).notes[0]
    quality = {"case accuracy (all questions right)": 0.3, "question accuracy (paper protocol: unanswered skipped)": 0.8}
    [ref] = table5.beside("gpt-4.1-nano", False, False, quality, "question accuracy (paper protocol: unanswered skipped)",
                      "case accuracy (all questions right)").references
    assert ref.rows == [["case-level accuracy", 0.226, 0.3], ["question-level accuracy", 0.784, 0.8]]
    tools = {"tool-selection accuracy @16 tools": 0.5, "tool-selection accuracy @32 tools": 0.4}
    [ref] = table9.beside("gpt-4o", False, {16: True, 32: False}, False, False, tools,
                    "tool-selection accuracy @{n} tools").references
    assert ref.rows == [["tool-selection accuracy @16 tools", 0.5219, 0.5]]  # 32: a seeded offer, not the release's
    forced = table9.beside("gpt-4o", True, {16: True}, False, False, tools, "tool-selection accuracy @{n} tools")
    assert forced.references == [] and "forces a call (-T force_tool_call)" in forced.notes[0]
    assert "a seeded draw" in table9.beside("gpt-4o", False, {16: False}, False, False, tools, "x @{n}").notes[0]
    for shown in (table4.beside("gpt-4.1", True, False, accuracy), table6.beside(spec("bm25"), None, [10], True, False, {}),
                  table7.beside(None, None, spec("bm25"), None, 10, R.QueryFormation("llm"), True, False, {})):
        assert shown.references == [] and shown.notes == [NONE + R.FILE]


# -- answer classification: the same retrieval as multi-turn retrieval ---------------------------------------

CATEGORIES = ["Correct", "Incorrect", "Hallucination", "Refusal"]


def table7_responder(request: Request) -> str:
    """Query writer, replier and judge: a query naming the conversation's products, one reply, a class drawn from
    the conversation (so the shares are not trivially one class)."""
    if "semantic search query" in request.prompt:
        return " ".join(p for p in cxm_synth.PRODUCTS if p in request.prompt) + " fees and rules"
    if request.messages[0]["role"] == "system" and "customer-care agent" in request.messages[0]["content"]:
        return "It is explained in the app."
    conversation = request.prompt.split("[Conversation so far]", 1)[1].split("[Agent reply", 1)[0]
    return json.dumps({"category": CATEGORIES[sum(map(ord, conversation)) % 4]})


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cxm_synth.write_multi_turn_release(tmp_path_factory.mktemp("release"), n_articles=14, n_turns=8,
                                              min_chars=1200, max_chars=2500)


def documented(command: str, release: Path) -> list[str]:
    """A command as `benches show` documents it, for this data and the local server (which plays gemini too)."""
    args = shlex.split(command.replace("FOLDER", str(release)).replace("gemini/", "openai/"))
    assert args[0] == "ragjudge"
    return args[1:]


def test_benches_show_documents_the_command_of_table_7(monkeypatch, capsys) -> None:
    code, out, _ = run_cli(monkeypatch, capsys, "benches", "show", "cxm-answer-classification")
    assert code == 0 and " ".join(table7.COMMAND.split()) in " ".join(out.split())
    assert "The paper's Table 7" in " ".join(out.split())
    code, out, _ = run_cli(monkeypatch, capsys, "benches", "show", "cxm-answer-classification", "--format", "json")
    shown = json.loads(out)
    assert table7.COMMAND in shown["data"]
    options = {o["flag"]: o for o in shown["options"]}
    assert options["-T k"]["default"] == "10" and options["-T chunk"]["default"] == "1000"


def test_answer_classification_takes_the_retrieval_options_of_multiturn_retrieval(monkeypatch, capsys) -> None:
    """One vocabulary: the same option names with the same help (chunk's names its own table)."""
    shown = {}
    for bench in ("cxm-multiturn-retrieval", "cxm-answer-classification"):
        code, out, _ = run_cli(monkeypatch, capsys, "benches", "show", bench, "--format", "json")
        assert code == 0
        shown[bench] = {o["flag"]: o["help"] for o in json.loads(out)["options"]}
    retrieval = ["--pipeline, -T pipeline", "-T chunk_overlap", "-T query", "--rewrite-model, -T rewrite_model",
                 "--pipeline-dir, -T pipeline_dir", "--index-dir, -T index_dir", "--judge-dir, -T judge_dir"]
    for flag in retrieval:
        assert shown["cxm-multiturn-retrieval"][flag] == shown["cxm-answer-classification"][flag], flag
    assert "llm (an LLM writes it with CXMArena's query-formation prompt" in shown["cxm-answer-classification"][
        "-T query"]


def test_the_replier_sees_what_multiturn_retrieval_ranks(monkeypatch, capsys, tmp_path: Path, release: Path) -> None:
    """Same pipeline, chunks, LLM queries: each reply's articles are multi-turn retrieval's top k, from the same
    query (before, answer classification had no LLM queries and read -T chunk and -T query on its own)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    common = ["--data", str(release), "--pipeline", "bm25", "--rewrite-model", "openai/writer", "--index-dir",
              str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    with OpenAIServer(table7_responder) as server:
        code, _, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-multiturn-retrieval", *common, "-T",
                               "chunk=1000", "-T", "ks=10", "--out", str(tmp_path / "mt"), "--api-base",
                               server.base_url)
        assert code == 0, err
        writes = server.chat_count()
        code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-answer-classification", *common,
                                 "--gen", "openai/replier", "--judge-models", "openai/judge", "-T", "k=4", "--out",
                                 str(tmp_path / "ac"), "--api-base", server.base_url)
        assert code == 0, err
        assert server.chat_count() == writes + 2 * 8  # the queries came from the cache: replies and verdicts only
    ranked = {r["case_id"]: r for r in map(json.loads, (tmp_path / "mt" / "results.jsonl").read_text().splitlines())}
    replied = [json.loads(x) for x in (tmp_path / "ac" / "results.jsonl").read_text().splitlines()]
    assert len(replied) == 8
    for row in replied:
        assert row["query_strategy"] == "llm" and row["query"] == ranked[row["case_id"]]["query"]
        assert row["ranking"] == ranked[row["case_id"]]["ranking"][:4]
    summary = json.loads(out)
    assert summary["title"] == ("CXMArena multi-turn answer classification (openai/replier replies from the top 4 "
                                "articles: bm25, chunks of 1000 characters (overlap 100), llm queries)")
    run = json.loads((tmp_path / "ac" / "run.json").read_text())
    assert run["query"] == "llm" and run["models"]["query_writer"] == "openai/writer"


def test_table_7_setup_is_the_documented_command_and_prints_the_papers_row(monkeypatch, capsys, tmp_path: Path,
                                                                           release: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    args = documented(table7.COMMAND, release)
    local = ["--index-dir", str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    with OpenAIServer(table7_responder) as server:
        code, out, err = run_cli(monkeypatch, capsys, *args, *local, "--out", str(tmp_path / "t7"), "--api-base",
                                 server.base_url)
        assert code == 0, err
        assert {r.model for r in server.requests if r.path.endswith("/embeddings")} == {"text-embedding-ada-002"}
        summary = json.loads(out)
        rows = [json.loads(x) for x in (tmp_path / "t7" / "results.jsonl").read_text().splitlines()]
        assert len(rows) == 8 and all(len(r["ranking"]) == 10 and r["query_strategy"] == "llm" for r in rows)
        shares = {c: sum(r["label"] == c for r in rows) / 8 for c in CATEGORIES}
        [ref] = summary["reference"]
        assert ref["source"] == "CXMArena (Garg et al., 2025), Table 7" and ref["unit"] == "fraction"
        assert ref["rows"] == [["Correct share", 0.5, shares["Correct"]], ["Incorrect share", 0.04, shares["Incorrect"]],
                               ["Hallucination share", 0.24, shares["Hallucination"]],
                               ["Refusal share", 0.22, shares["Refusal"]]]
        assert "text-embedding-ada-002 over chunks of 1000 characters" in ref["comparable"]
        assert not [n for n in summary["notes"] if n.startswith(NONE)]
        info = json.loads((tmp_path / "t7" / "run.json").read_text())["index"]
        assert info["chunking"] == "chunks of 1000 characters (overlap 100)"
        # one condition off, each: no paper figure, one line saying which
        for extra, differs in ((["-T", "k=5"], "CXMArena's predictor gives the replier the top 10; this run -T k=5"),
                               (["--limit", "3"], R.PARTIAL),
                               (["-T", "chunk=500"], "this run: chunks of 500 characters overlapping by 100")):
            code, out, err = run_cli(monkeypatch, capsys, *args, *extra, *local, "--out", str(tmp_path / extra[1]),
                                     "--api-base", server.base_url)
            assert code == 0, err
            summary = json.loads(out)
            assert summary["reference"] == [] and differs in why(summary), extra
        code, out, err = run_cli(monkeypatch, capsys, *args, "--limit", "8", *local, "--out", str(tmp_path / "all"),
                                 "--api-base", server.base_url)
        assert code == 0 and len(json.loads(out)["reference"]) == 1, err  # a --limit that cuts nothing
        mini = [a if a != "openai/gpt-4o" or i != args.index("--gen") + 1 else "openai/gpt-4o-mini"
                for i, a in enumerate(args)]
        code, out, err = run_cli(monkeypatch, capsys, *mini, *local, "--out", str(tmp_path / "mini"), "--api-base",
                                 server.base_url)
        assert code == 0, err
        assert json.loads(out)["reference"] == [] and "this run's replier is openai/gpt-4o-mini" in why(json.loads(out))


def test_table_8_setup_prints_the_papers_rows_beside_the_paper_protocol(monkeypatch, capsys, tmp_path: Path,
                                                                        release: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    command = table8.SETUP.split("`")[1]
    with OpenAIServer(table7_responder) as server:
        code, out, err = run_cli(monkeypatch, capsys, *documented(command, release), "--index-dir",
                                 str(tmp_path / "idx"), "--cache-dir", str(tmp_path / "cache"), "--out",
                                 str(tmp_path / "t8"), "--format", "json", "--api-base", server.base_url)
    assert code == 0, err
    summary = json.loads(out)
    m = values(summary)
    [ref] = summary["reference"]
    assert ref["rows"] == [["average recall @10", 0.26, m["R@10 (paper protocol)"]],
                           ["average recall @20", 0.35, m["R@20 (paper protocol)"]]]
    assert ref["title"] == ("Paper, Table 8: multi-turn retrieval, text-embedding-ada-002, chunks of 500 characters, "
                            "LLM-formed queries")


# -- quality: the model by exact name, end to end -------------------------------------------------------------

def quality_answers(request: Request) -> str:
    for needle, answers in {"thanks for calling": [True, True, True], "opening hours": [True, "na", False],
                            "wrong again": [False, True, True]}.items():
        if needle in request.prompt:
            return json.dumps({"answers": [{"question": i + 1, "answer": v} for i, v in enumerate(answers)]})
    raise AssertionError("unexpected prompt")


def test_table_5_row_of_the_run_model_and_only_its_row(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer(quality_answers) as server:
        for model, row in (("openai/gpt-4.1-mini", (0.273, 0.831)), ("openai/gpt-4.1", (0.324, 0.861)),
                           ("openai/gpt-4.1-mini-2025", None)):
            code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-quality", "--data", str(EXAMPLE),
                                     "--gen", model, "--api-base", server.base_url, "--cache-dir",
                                     str(tmp_path / "cache"), "--out", str(tmp_path / model.replace("/", "-")),
                                     "--format", "json")
            assert code == 0, err
            summary = json.loads(out)
            m = values(summary)
            if row is None:
                assert summary["reference"] == [] and "this run's model is openai/gpt-4.1-mini-2025" in why(summary)
                continue
            [ref] = summary["reference"]
            assert ref["rows"] == [["case-level accuracy", row[0], m["case accuracy (all questions right)"]],
                                   ["question-level accuracy", row[1],
                                    m["question accuracy (paper protocol: unanswered skipped)"]]]


# -- KB refinement: the baseline's figures named as the baseline's ---------------------------------------------

def test_kb_analysis_figures_are_the_baselines_and_the_papers_method_only_with_its_options(monkeypatch, capsys,
                                                                                          tmp_path: Path) -> None:
    """Scoring a predictions file with the embedding baseline's analysis: the system's P/R/F1 keep their names, the
    MiniLM analysis' are `baseline:minilm ...` (they used to sit unnamed beside the system's). "(the paper's
    method)" only with the predictor's threshold 0.9 and k 4 (it used to be said with -T threshold=0.5 too)."""
    code, out, err = run_cli(monkeypatch, capsys, "cxm", "score", "--task", "kb-refinement", "--data", str(EXAMPLE),
                             "--format", "json")
    assert code == 0, err
    [summary] = json.loads(out)
    analysis = [n for n in summary["metrics"] if "held-out" in n or "oracle" in n]
    assert analysis and all(n.startswith("baseline:minilm ") for n in analysis)
    assert {"similar precision", "similar recall", "similar F1"} <= set(summary["metrics"])
    assert "the figures named baseline:minilm are the embedding baseline's (MiniLM embeddings, k=4), not those of " \
           "the predictions scored" in summary["notes"]
    [sweep] = [t for t in summary["tables"] if "by threshold" in t["title"]]
    assert sweep["title"].startswith("baseline:minilm (MiniLM embeddings, k=4): similar pairs by threshold")
    code, out, _ = run_cli(monkeypatch, capsys, "benches", "show", "cxm-kb-refinement", "--format", "json")
    declared = [m["name"] for m in json.loads(out)["metrics"] if "held-out" in m["name"] or "oracle" in m["name"]]
    assert len(declared) == 6 and all(n.startswith("baseline:* ") for n in declared)
    other = "(the paper's method with other settings: CXMArena's predictor uses threshold 0.9 and 4 neighbours)"
    for i, (extra, method) in enumerate((([], "(the paper's method)"), (["-T", "threshold=0.5"], other),
                                         (["-T", "k=2"], "(the paper's method with other settings"))):
        code, out, err = run_cli(monkeypatch, capsys, "eval", "--bench", "cxm-kb-refinement", "--data", str(EXAMPLE),
                                 *extra, "--out", str(tmp_path / f"kb{i}"), "--format", "json")
        assert code == 0, err
        first = json.loads(out)["notes"][0]
        assert first.startswith("baseline:minilm: each article's") and method in first, extra
        assert ("(the paper's method)" in first) == (not extra)
