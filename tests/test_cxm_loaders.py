"""CXMArena loaders: the public release's columns (as Sprinklr's own loader/evaluator read them) in JSONL,
CSV and Parquet, ragjudge's plain JSONL, `fetch`'s folder layout, transcripts with message ids, the json
parse kind of judge specs, and one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from ragjudge.bench.cxm.article_search.data import load_search
from ragjudge.bench.cxm.data import load_articles, load_rag, normalize_message_id
from ragjudge.bench.cxm.intent.data import load_intent
from ragjudge.bench.cxm.kb_refinement.data import load_pairs
from ragjudge.bench.cxm.quality.data import load_quality
from ragjudge.bench.cxm.tool_calls.data import load_tool_cases, load_tool_catalog
from ragjudge.bench.cxm.conversation import chat_messages, parse_transcript
from ragjudge.bench.cxm.hub import fetch
from ragjudge.bench.cxm.models import ToolCall, ToolCase
from ragjudge.bench.cxm.intent.solver import map_intent
from ragjudge.bench.cxm.tool_calls.data import offered_tools
from ragjudge.errors import InputError
from ragjudge.judges.json_parse import parse_json_output
from ragjudge.judges.registry import JudgeRegistry
from ragjudge.judges.spec import JudgeSpec, ParseSpec

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cxm"


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


# Rows shaped like the release (column names from sprinklr's cxm_downloader/cxm_evaluator/cxm_predictor).
RELEASE = {
    ("Taxonomy", "taxonomy_1"): [{"L1": "Billing", "Description": "Charges"},
                                 {"L1": "Roaming", "Description": "Abroad"}],
    ("Taxonomy", "taxonomy_2"): [{"L1": "Billing", "L2": "Double charge", "Description": "Twice"},
                                 {"L1": "Travel", "L2": "Roaming", "Description": ""}],
    ("Intent_Prediction", "train"): [
        {"Complete Conversations": "Customer: I was billed twice.\nAgent: Sorry, refunding now.",
         "Taxonomy_1": "Billing", "Taxonomy_2": "Billing:Double charge"},
        {"Complete Conversations": "Customer: Cost in Japan?\nAgent: 2 euros a day.", "Taxonomy_1": "Roaming",
         "Taxonomy_2": "Travel:Roaming"},
    ],
    ("Agent_Quality_Adherence", "train"): [
        {"conversation_id": "conv-9", "conversation": "AGENT[1]:Hello, Sam here.\nCUSTOMER[2]:Hi\nAGENT[3]:Your PIN?",
         "question_answers": json.dumps([
             {"Question": "Did the agent greet?", "Explanation": "...", "Answer": "Yes", "proof_message_ids": [1]},
             {"Question": "Did the agent apologise?", "Answer": "No", "proof_message_ids": []}])},
        {"conversation_id": "conv-9", "conversation": "AGENT[1]:Hello, Sam here.\nCUSTOMER[2]:Hi\nAGENT[3]:Your PIN?",
         "question_answers": str([{"Question": "Was a refund needed?", "Answer": "NA", "proof_message_ids": []}])},
    ],
    ("Tools_Description", "train"): [
        {"Name": "refund", "Definition": str({"type": "function", "function": {
            "name": "refund", "description": "Refund", "parameters": {"type": "object", "properties": {}}}})},
        {"Name": "lookup", "Definition": json.dumps({"type": "function", "function": {"name": "lookup"}})},
    ],
    ("Tool_Calling", "train"): [
        {"conversation_context": "Customer: refund me please", "true_tools": ["refund"], "kbs": ["KB_1"],
         "tool_candidates16": ["lookup", "refund"]},
    ],
    ("KB_Refinement", "similarity_pairs"): [{"Pairs": "['KB_1', 'KB_2']"}, {"Pairs": ["KB_3", "KB_1"]}],
    ("KB_Refinement", "contradictory_pairs"): [{"Pairs": "['KB_2', 'KB_3']"}],
    ("Articles", "KB_refinement_articles"): [{"document_id": f"KB_{i}", "document_path": f"./articles/KB_{i}.txt",
                                              "document_content": f"text {i}"} for i in (1, 2, 3)],
    ("Articles", "article_search_articles"): [{"document_id": "KB_1", "document_content": "Roaming costs"}],
    ("Articles", "multi_turn_articles"): [{"document_id": "KB_1", "document_content": "Refunds in 5 days"}],
    ("Article_Search", "train"): [{"query": "roaming price?", "True KB ID": "KB_1"}],
    ("Multi_Turn", "train"): [
        {"conversation_id": 4, "conversation_context": "Customer: refund?", "correct_agent_response": "5 days",
         "kb_ids": "['KB_1']"},
        {"conversation_id": 4, "conversation_context": "Customer: refund?\nAgent: 5 days\nCustomer: ok, thanks",
         "correct_agent_response": "Welcome", "kb_ids": []},
    ],
}


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """The release layout `ragjudge cxm fetch` writes, with two configs in CSV/Parquet to cover those readers."""
    for (config, split), rows in RELEASE.items():
        path = tmp_path / config / f"{split}.jsonl"
        if config == "Intent_Prediction":
            path.parent.mkdir(parents=True, exist_ok=True)
            pd.DataFrame(rows).to_csv(path.with_suffix(".csv"), index=False)
        elif (config, split) == ("Taxonomy", "taxonomy_2"):
            path.parent.mkdir(parents=True, exist_ok=True)
            pd.DataFrame(rows).to_parquet(path.with_suffix(".parquet"))
        else:
            write_jsonl(path, rows)
    return tmp_path


def test_release_intent_flat_and_two_level(release: Path) -> None:
    cases, taxonomies = load_intent(release)
    assert list(taxonomies) == ["taxonomy_1", "taxonomy_2"]
    assert taxonomies["taxonomy_2"].two_level and taxonomies["taxonomy_2"].labels == ["Billing:Double charge",
                                                                                       "Travel:Roaming"]
    assert [c.case_id for c in cases] == ["1", "2"]  # record positions, as in JSONL and Parquet
    assert cases[0].gold == {"taxonomy_1": "Billing", "taxonomy_2": "Billing:Double charge"}
    # one turn per line, ids numbered from 1
    assert [(m.id, m.speaker, m.text) for m in cases[0].messages] == [
        ("1", "customer", "I was billed twice."), ("2", "agent", "Sorry, refunding now.")]


def test_release_quality_rows_merge_per_conversation(release: Path) -> None:
    [case] = load_quality(release)
    assert case.case_id == "conv-9"
    assert [m.id for m in case.messages] == ["1", "2", "3"] and case.messages[0].speaker == "agent"
    assert [(q.question_id, q.answer, q.evidence) for q in case.questions] == [
        ("q1", True, ["1"]), ("q2", False, []), ("q3", None, [])]


def test_release_tools_pairs_search_multi_turn(release: Path) -> None:
    catalog = load_tool_catalog(release)
    assert list(catalog) == ["refund", "lookup"]
    assert catalog["lookup"]["function"]["parameters"] == {"type": "object", "properties": {}}
    [case] = load_tool_cases(release, catalog)
    assert [c.name for c in case.expected] == ["refund"] and case.expected[0].arguments is None
    assert case.candidates == {16: ["lookup", "refund"]} and case.kb_ids == ["KB_1"]
    gold = load_pairs(release)
    assert gold == {"similar": {frozenset({"KB_1", "KB_2"}), frozenset({"KB_1", "KB_3"})},
                    "contradictory": {frozenset({"KB_2", "KB_3"})}}
    assert list(load_articles(release, "kb-refinement")) == ["KB_1", "KB_2", "KB_3"]
    [query] = load_search(release)
    assert query.relevant == ["KB_1"] and query.query_id == "1"
    rag = load_rag(release)
    assert [c.case_id for c in rag] == ["4.1", "4.2"]  # several turns of one conversation
    assert rag[0].kb_ids == ["KB_1"] and rag[0].reference == "5 days" and rag[1].kb_ids == []


def test_fetch_writes_the_layout_the_loaders_read(tmp_path: Path) -> None:
    by_config: dict[str, dict[str, list[dict]]] = {}
    for (config, split), rows in RELEASE.items():
        by_config.setdefault(config, {})[split] = rows
    calls = []

    def fake_load(repo: str, config: str) -> dict[str, list[dict]]:
        calls.append((repo, config))
        return by_config[config]

    written = fetch(tmp_path, ["Tool_Calling", "Tools_Description"], load=fake_load)
    assert calls == [("sprinklr-huggingface/CXM_Arena", "Tool_Calling"),
                     ("sprinklr-huggingface/CXM_Arena", "Tools_Description")]
    assert written == [tmp_path / "Tool_Calling" / "train.jsonl", tmp_path / "Tools_Description" / "train.jsonl"]
    catalog = load_tool_catalog(tmp_path)
    assert [c.expected[0].name for c in load_tool_cases(tmp_path, catalog)] == ["refund"]


def test_plain_jsonl_example_loads() -> None:
    cases, taxonomies = load_intent(EXAMPLE)
    assert len(cases) == 6 and set(taxonomies) == {"flat", "two_level"}
    quality = load_quality(EXAMPLE)
    assert [len(c.questions) for c in quality] == [3, 3, 3]
    assert quality[1].questions[1].answer is None  # "NA"
    catalog = load_tool_catalog(EXAMPLE)
    tool_cases = load_tool_cases(EXAMPLE, catalog)
    assert tool_cases[1].expected[1].arguments == {"country": "Japan"}
    assert len(load_rag(EXAMPLE)) == 4 and len(load_search(EXAMPLE)) == 5


@pytest.mark.parametrize("name, rows, message, line, field", [
    ("quality.jsonl", [{"conversation_id": "x", "conversation": "Agent: hi",
                        "questions": [{"question": "Greeted?", "answer": "maybe"}]}],
     "'maybe' is not True, False or NA", 1, "answer"),
    ("quality.jsonl", [{"conversation_id": "x", "conversation": "Agent: hi", "questions": [{"question": "Greeted?"}]}],
     "has no answer", 1, "answer"),  # a missing answer is not silently "NA"
    ("kb_pairs.jsonl", [{"kind": "similar", "pair": ["KB_1", "KB_1"]}], "two different articles", 1, "pair"),
    ("kb_pairs.jsonl", [{"kind": "similar", "pair": ["KB_1", None]}], "list of ids", 1, "pair"),
    ("kb_pairs.jsonl", [{"kind": "duplicate", "pair": ["KB_1", "KB_2"]}], "kind must be one of", 1, "kind"),
    ("search_queries.jsonl", [{"query_id": "a", "query": "x", "relevant": ["KB_1"]},
                              {"query_id": "a", "query": "y", "relevant": ["KB_2"]}], "repeats", 2, "query_id"),
])
def test_bad_rows_name_file_line_and_field(tmp_path: Path, name: str, rows: list[dict], message: str, line: int,
                                           field: str) -> None:
    write_jsonl(tmp_path / name, rows)
    load = {"quality.jsonl": load_quality, "kb_pairs.jsonl": load_pairs,
            "search_queries.jsonl": load_search}[name]
    with pytest.raises(InputError) as info:
        load(tmp_path)
    err = info.value
    assert message in err.message and err.line == line and err.field == field and err.file.endswith(name)


def test_unknown_tool_and_missing_files(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "tools.jsonl", [{"name": "refund"}])
    write_jsonl(tmp_path / "tool_calls.jsonl", [{"case_id": "t", "conversation": "Customer: hi",
                                                 "expected": [{"name": "teleport", "arguments": {}}]}])
    catalog = load_tool_catalog(tmp_path)
    with pytest.raises(InputError, match="'teleport' is not in the tool definitions") as unknown:
        load_tool_cases(tmp_path, catalog)
    assert unknown.value.field == "expected[0].name" and unknown.value.line == 1
    with pytest.raises(InputError, match="no intent taxonomy found"):
        load_intent(tmp_path)
    (tmp_path / "intent.jsonl").write_text('{"broken": \n', encoding="utf-8")
    write_jsonl(tmp_path / "taxonomy.jsonl", [{"taxonomy": "t", "l1": "A"}])
    with pytest.raises(InputError) as info:
        load_intent(tmp_path)
    assert info.value.line == 1 and "invalid JSON" in info.value.message


def test_transcripts_and_chat_roles() -> None:
    messages = parse_transcript("AGENT[1]: Hello\nthere\nCUSTOMER [2] : my bill\nAgent[3]:ok")
    assert [(m.id, m.speaker, m.text) for m in messages] == [("1", "agent", "Hello\nthere"),
                                                              ("2", "customer", "my bill"), ("3", "agent", "ok")]
    assert parse_transcript("no speakers here")[0].speaker == "transcript"
    chat = chat_messages(parse_transcript("Customer: a\nCustomer: b\nAgent: c"))
    assert chat == [{"role": "user", "content": "a\nb"}, {"role": "assistant", "content": "c"}]
    assert normalize_message_id("Message-ID: 12") == "12" and normalize_message_id(3) == "3"


def test_map_intent_to_taxonomy() -> None:
    labels = ["Billing:Double charge", "Billing:Refund status", "Roaming"]
    assert map_intent("Roaming", labels, 0.85) == ("Roaming", "exact")
    assert map_intent(" billing > double charge.", labels, 0.85) == ("Billing:Double charge", "normalized")
    assert map_intent("Billing:Refund statuss", labels, 0.85) == ("Billing:Refund status", "fuzzy")
    assert map_intent("Weather", labels, 0.85) == (None, "none")


def test_offered_tools_are_nested_and_contain_the_expected_ones(release: Path) -> None:
    catalog = [f"tool_{i}" for i in range(40)]
    case = ToolCase(case_id="c", messages=[], expected=[ToolCall(name="tool_7")])
    small, large = offered_tools(case, catalog, 8), offered_tools(case, catalog, 32)
    assert len(small) == 8 and len(large) == 32 and "tool_7" in small and set(small) <= set(large)
    assert offered_tools(case, catalog, 8) == small  # deterministic
    assert offered_tools(case, catalog, 64) is None  # the catalog is too small
    given = ToolCase(case_id="d", messages=[], expected=[ToolCall(name="a")], candidates={2: ["b", "a"]})
    assert offered_tools(given, catalog, 2) == ["b", "a"]


# -- the json parse kind --------------------------------------------------------------------------------

SCHEMA = {"type": "object", "required": ["intent"], "properties": {"intent": {"type": "string"}}}


def test_json_parse_finds_fenced_and_embedded_json() -> None:
    spec = ParseSpec(kind="json", json_schema=SCHEMA)
    assert parse_json_output('Sure.\n```json\n{"intent": "Roaming"}\n```', spec).value == {"intent": "Roaming"}
    assert parse_json_output('I think {"intent": "Billing"} fits.', spec).value == {"intent": "Billing"}
    # the first object does not satisfy the schema, the later one does
    assert parse_json_output('{"note": 1} then {"intent": "X"}', spec).value == {"intent": "X"}
    bad = parse_json_output('{"intent": 5}', spec)
    assert not bad.ok and "intent" in bad.error and "not of type 'string'" in bad.error
    assert parse_json_output("no json at all", spec).error == "unparsable output: no JSON object or array found"


def test_json_parse_kind_in_specs() -> None:
    with pytest.raises(ValueError, match="needs json_schema"):
        ParseSpec(kind="json")
    with pytest.raises(ValueError, match="not a valid JSON Schema"):
        ParseSpec(kind="json", json_schema={"type": "nonsense"})
    with pytest.raises(ValueError, match="needs pattern"):
        ParseSpec(kind="choice", choices={"yes": 1.0})
    with pytest.raises(ValueError, match="generic llm judge parses choice or rating"):
        JudgeSpec(name="x", description="x", metric="x", kind="llm", prompt={"user": "hi"},
                  parse={"kind": "json", "json_schema": SCHEMA})
    # every built-in spec (the MTRAG ones with choice/rating parsers and the cxm ones) still loads and builds
    registry, cxm = JudgeRegistry(), JudgeRegistry(bench="cxm")
    assert {"idk", "rb_llm"} <= set(registry.names)
    assert {"cxm_intent_prediction", "cxm_answer_classification"} <= set(cxm.names)
    assert registry.spec("idk").parse.kind == "choice" and registry.spec("rb_llm").parse.kind == "rating"
    for name in cxm.names:
        cxm.build(name)
    for name in ("idk", "rb_llm"):
        registry.build(name)
