"""Load each CXMArena task from a data folder: the public release's tables or ragjudge's plain JSONL files.

Every loader accepts both spellings row by row, so a folder may mix them. Release column names follow
Sprinklr's own loader and evaluator (`sprinklr-huggingface/CXM_Arena`, github.com/kapilsprinklr/CXMArena);
the plain JSONL names are documented in `examples/cxm/README.md`. Bad rows raise InputError with the
file, row and field.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ragjudge.bench.cxm.conversation import parse_messages
from ragjudge.bench.cxm.models import (
    PAIR_KINDS,
    Article,
    IntentCase,
    QualityCase,
    QualityQuestion,
    RagCase,
    SearchQuery,
    Taxonomy,
    TaxonomyEntry,
    ToolCall,
    ToolCase,
    normalize_class,
    parse_arguments,
)
from ragjudge.bench.cxm.tables import field, find_file, id_list, listish, read_rows, require_file, structured
from ragjudge.errors import InputError

ARTICLE_FILES = {
    "kb-refinement": (("kb_refinement_articles.jsonl", "articles.jsonl"), (("Articles", "KB_refinement_articles"),)),
    "article-search": (("article_search_articles.jsonl", "articles.jsonl"), (("Articles", "article_search_articles"),)),
    "multi-turn": (("multi_turn_articles.jsonl", "articles.jsonl"), (("Articles", "multi_turn_articles"),)),
}
TAXONOMY_SPLITS = (("Taxonomy", "taxonomy_1"), ("Taxonomy", "taxonomy_2"), ("Taxonomy", "taxonomy_3"))

_MESSAGE_ID_PREFIX = re.compile(r"^\s*(?:message[\s_-]*id\s*[:#-]?\s*)", re.IGNORECASE)


def _conversation(row: dict[str, Any], path: Path, line: int) -> list:
    names = ("messages", "conversation", "Conversation", "Complete Conversations", "conversation_context")
    for name in names:
        if row.get(name) is not None:
            return parse_messages(row[name], path=path, line=line, name=name)
    raise InputError(f"missing conversation (one of {', '.join(names)})", file=str(path), line=line)


def _str_id(value: Any, fallback: str) -> str:
    return fallback if value is None or str(value).strip() == "" else str(value).strip()


def _text(value: Any, path: Path, line: int, name: str) -> str | None:
    """A text cell (numbers are read as text); None stays None; anything else is an error."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(f"expected text, found {value!r}"[:120], file=str(path), line=line, field=name)
    return str(value)


def normalize_message_id(value: Any) -> str:
    """`3`, `"3"`, `"[3]"` and `"Message-ID: 3"` all name message 3."""
    text = _MESSAGE_ID_PREFIX.sub("", str(value)).strip().strip("[]()").strip()
    return text


# -- articles -------------------------------------------------------------------------------------------

def load_articles(folder: Path, kind: str) -> dict[str, Article]:
    names, release = ARTICLE_FILES[kind]
    path = require_file(folder, f"{kind} articles", names, release)
    articles: dict[str, Article] = {}
    for line, row in read_rows(path):
        article_id = field(row, "id", "document_id", "article_id")
        text = field(row, "text", "document_content", "content")
        if article_id is None or not isinstance(text, str):
            raise InputError("an article needs id (or document_id) and text (or document_content)",
                             file=str(path), line=line)
        article_id = str(article_id)
        if article_id in articles:
            raise InputError(f"article id {article_id!r} repeats", file=str(path), line=line, field="id")
        title = _text(field(row, "title", "document_title"), path, line, "title")
        articles[article_id] = Article(id=article_id, text=text, title=title or None)
    return articles


# -- intent prediction ----------------------------------------------------------------------------------

def load_taxonomies(folder: Path) -> dict[str, Taxonomy]:
    """`taxonomy.jsonl` rows {taxonomy, l1, l2?, description?}, or the release's Taxonomy/taxonomy_N files."""
    entries: dict[str, list[TaxonomyEntry]] = OrderedDict()
    plain = find_file(folder, ("taxonomy.jsonl",))
    sources: list[tuple[Path, str | None]] = [(plain, None)] if plain else []
    if not sources:
        for config, split in TAXONOMY_SPLITS:
            path = find_file(folder, (), ((config, split),))
            if path is not None:
                sources.append((path, split))
    if not sources:
        raise InputError("no intent taxonomy found (looked for taxonomy.jsonl, "
                         "Taxonomy/taxonomy_N.jsonl|.parquet|.csv)", file=str(folder))
    for path, split_name in sources:
        for line, row in read_rows(path):
            name = split_name or field(row, "taxonomy")
            l1 = field(row, "l1", "L1", "intent")
            if not name or l1 is None:
                raise InputError("a taxonomy row needs taxonomy and l1 (or intent)", file=str(path), line=line)
            l1 = _text(l1, path, line, "l1")
            l2 = _text(field(row, "l2", "L2"), path, line, "l2")
            description = _text(field(row, "description", "Description"), path, line, "description") or ""
            entries.setdefault(str(name).lower(), []).append(
                TaxonomyEntry(l1=str(l1).strip(), l2=l2.strip() if l2 else None, description=description))
    taxonomies = {}
    for name, rows in entries.items():
        labels = [e.label for e in rows]
        dupes = sorted({lab for lab in labels if labels.count(lab) > 1})
        if dupes:
            raise InputError(f"taxonomy {name!r} lists {dupes[0]!r} twice", file=str(sources[0][0]))
        taxonomies[name] = Taxonomy(name=name, entries=rows)
    return taxonomies


def load_intent(folder: Path) -> tuple[list[IntentCase], dict[str, Taxonomy]]:
    taxonomies = load_taxonomies(folder)
    path = require_file(folder, "intent conversations", ("intent.jsonl",), (("Intent_Prediction", "train"),))
    cases = []
    seen: set[str] = set()
    for line, row in read_rows(path):
        case_id = _str_id(field(row, "case_id", "conversation_id", "id"), str(line))
        if case_id in seen:
            raise InputError(f"case id {case_id!r} repeats", file=str(path), line=line, field="conversation_id")
        seen.add(case_id)
        gold: dict[str, str] = {}
        intents = row.get("intents")
        if intents is not None and not isinstance(intents, dict):
            raise InputError("intents must be an object {taxonomy: label}", file=str(path), line=line,
                             field="intents")
        if isinstance(intents, dict):
            gold = {str(k).lower(): str(_text(v, path, line, "intents")).strip()
                    for k, v in intents.items() if v is not None}
        elif row.get("intent") is not None:
            if len(taxonomies) != 1:
                raise InputError("'intent' is ambiguous with several taxonomies: use intents {taxonomy: label}",
                                 file=str(path), line=line, field="intent")
            gold = {next(iter(taxonomies)): str(_text(row["intent"], path, line, "intent")).strip()}
        for key, value in row.items():  # the release: one gold column per taxonomy (Taxonomy_1, ...)
            if re.fullmatch(r"taxonomy_\d+", key, re.IGNORECASE) and value is not None:
                gold[key.lower()] = str(_text(value, path, line, key)).strip()
        unknown = [t for t in gold if t not in taxonomies]
        if unknown:
            raise InputError(f"gold intent for unknown taxonomy {unknown[0]!r} (known: {', '.join(taxonomies)})",
                             file=str(path), line=line, field="intents")
        cases.append(IntentCase(case_id=case_id, messages=_conversation(row, path, line), gold=gold))
    return cases, taxonomies


# -- agent quality adherence ----------------------------------------------------------------------------

def parse_answer(value: Any) -> bool | None:
    """True/False/NA from booleans or text (Yes/No/NA as the release writes them). ValueError otherwise."""
    if isinstance(value, bool):
        return value
    if value is None:
        return None
    text = str(value).strip().lower().rstrip(".")
    if text in ("true", "yes", "y", "1"):
        return True
    if text in ("false", "no", "n", "0"):
        return False
    if text in ("na", "n/a", "not applicable", "none", "null", ""):
        return None
    raise ValueError(f"{value!r} is not True, False or NA")


def _questions(row: dict[str, Any], path: Path, line: int) -> list[dict[str, Any]]:
    raw = field(row, "questions", "question_answers")
    if raw is None:
        raise InputError("missing questions (or question_answers)", file=str(path), line=line)
    items = structured(raw, path=path, line=line, name="questions")
    if not isinstance(items, list) or not items:
        raise InputError("questions must be a non-empty list", file=str(path), line=line, field="questions")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InputError(f"question {i + 1} is not an object", file=str(path), line=line, field="questions")
        text = field(item, "question", "Question", "text")
        if not isinstance(text, str):
            raise InputError(f"question {i + 1} has no text", file=str(path), line=line, field="questions")
        if "answer" not in item and "Answer" not in item:  # a missing answer is not "NA": say so
            raise InputError(f"question {i + 1} has no answer (true, false or \"NA\")", file=str(path), line=line,
                             field="answer")
        try:
            answer = parse_answer(field(item, "answer", "Answer"))
        except ValueError as exc:
            raise InputError(f"question {i + 1}: {exc}", file=str(path), line=line, field="answer") from None
        evidence_raw = field(item, "evidence", "message_ids", "proof_message_ids")
        evidence = None
        if evidence_raw is not None:
            evidence = [normalize_message_id(x) for x in id_list(evidence_raw, path=path, line=line, name="evidence")]
        out.append({"id": field(item, "id", "question_id"), "text": text, "answer": answer, "evidence": evidence,
                    "line": line})
    return out


def load_quality(folder: Path) -> list[QualityCase]:
    """One case per conversation; release rows that share a conversation_id are merged."""
    path = require_file(folder, "quality-adherence cases", ("quality.jsonl",), (("Agent_Quality_Adherence", "train"),))
    grouped: dict[str, dict[str, Any]] = OrderedDict()
    for line, row in read_rows(path):
        case_id = _str_id(field(row, "case_id", "conversation_id", "id"), str(line))
        questions = _questions(row, path, line)
        if case_id not in grouped:
            grouped[case_id] = {"messages": _conversation(row, path, line), "questions": [], "line": line}
        grouped[case_id]["questions"].extend(questions)
    cases = []
    for case_id, group in grouped.items():
        questions = []
        message_ids = {m.id for m in group["messages"]}
        for i, q in enumerate(group["questions"]):
            question_id = str(q["id"]) if q["id"] is not None else f"q{i + 1}"
            if any(x.question_id == question_id for x in questions):
                raise InputError(f"question id {question_id!r} repeats in case {case_id!r}", file=str(path),
                                 line=q["line"], field="questions")
            unknown = [e for e in q["evidence"] or [] if e not in message_ids]
            if unknown:
                raise InputError(f"evidence names message {unknown[0]!r}, which case {case_id!r} does not have",
                                 file=str(path), line=q["line"], field="evidence")
            questions.append(QualityQuestion(question_id=question_id, text=q["text"], answer=q["answer"],
                                             evidence=q["evidence"]))
        cases.append(QualityCase(case_id=case_id, messages=group["messages"], questions=questions))
    return cases


# -- tool calls -----------------------------------------------------------------------------------------

def _openai_tool(definition: Any, path: Path, line: int) -> dict[str, Any]:
    """OpenAI tool format: {"type": "function", "function": {"name", "description", "parameters"}}."""
    if isinstance(definition, dict) and isinstance(definition.get("function"), dict):
        function = definition["function"]
    elif isinstance(definition, dict) and "name" in definition:
        function = {k: v for k, v in definition.items() if k in ("name", "description", "parameters", "strict")}
    else:
        raise InputError("a tool needs an OpenAI function definition", file=str(path), line=line, field="definition")
    if not isinstance(function.get("name"), str) or not function["name"]:
        raise InputError("a tool definition needs a name", file=str(path), line=line, field="definition")
    function = {**function}
    function.setdefault("parameters", {"type": "object", "properties": {}})
    if not isinstance(function["parameters"], dict):
        raise InputError("a tool's parameters must be a JSON Schema object", file=str(path), line=line,
                         field="parameters")
    return {"type": "function", "function": function}


def load_tool_catalog(folder: Path) -> dict[str, dict[str, Any]]:
    """Tool name → OpenAI tool schema, from tools.jsonl or the release's Tools_Description."""
    path = require_file(folder, "tool definitions", ("tools.jsonl",), (("Tools_Description", "train"),))
    catalog: dict[str, dict[str, Any]] = OrderedDict()
    for line, row in read_rows(path):
        if "Definition" in row or "definition" in row:
            raw = field(row, "Definition", "definition")
            tool = _openai_tool(structured(raw, path=path, line=line, name="Definition"), path, line)
            declared = field(row, "Name", "name")
            if declared is not None and str(declared) != tool["function"]["name"]:
                raise InputError(f"Name {declared!r} differs from the definition's {tool['function']['name']!r}",
                                 file=str(path), line=line, field="Name")
        else:
            tool = _openai_tool(row, path, line)
        name = tool["function"]["name"]
        if name in catalog:
            raise InputError(f"tool {name!r} is defined twice", file=str(path), line=line, field="name")
        catalog[name] = tool
    return catalog


def _expected_calls(row: dict[str, Any], path: Path, line: int) -> list[ToolCall]:
    raw = field(row, "expected", "expected_calls", "true_tools")
    if raw is None:
        raise InputError("missing expected (or true_tools)", file=str(path), line=line)
    items = listish(raw, path=path, line=line, name="expected")
    calls = []
    for item in items:
        if isinstance(item, str):
            calls.append(ToolCall(name=item))
        elif isinstance(item, dict) and isinstance(item.get("name"), str):
            args = item.get("arguments")
            parsed = parse_arguments(args)
            if args is not None and parsed is None:
                raise InputError(f"arguments of {item['name']!r} are not a JSON object", file=str(path), line=line,
                                 field="expected")
            calls.append(ToolCall(name=item["name"], arguments=parsed))
        else:
            raise InputError("an expected call is a tool name or {name, arguments}", file=str(path), line=line,
                             field="expected")
    if not calls:
        raise InputError("no expected tool call", file=str(path), line=line, field="expected")
    return calls


def load_tool_cases(folder: Path, catalog: dict[str, dict[str, Any]]) -> list[ToolCase]:
    path = require_file(folder, "tool-call cases", ("tool_calls.jsonl",), (("Tool_Calling", "train"),))
    cases = []
    seen: set[str] = set()
    for line, row in read_rows(path):
        case_id = _str_id(field(row, "case_id", "id"), str(line))
        if case_id in seen:
            raise InputError(f"case id {case_id!r} repeats", file=str(path), line=line, field="case_id")
        seen.add(case_id)
        expected = _expected_calls(row, path, line)
        candidates: dict[int, list[str]] = {}
        given = row.get("candidates")
        if given is not None and not isinstance(given, dict):
            raise InputError('candidates must be an object {"16": [tool names], ...}', file=str(path), line=line,
                             field="candidates")
        for size, names in (given or {}).items():
            if not str(size).strip().isdigit() or int(size) < 1:
                raise InputError(f"candidates keys are numbers of offered tools, got {size!r}", file=str(path),
                                 line=line, field="candidates")
            candidates[int(size)] = id_list(names, path=path, line=line, name=f"candidates.{size}")
        for key, value in row.items():  # the release: tool_candidates16, tool_candidates32, ...
            match = re.fullmatch(r"tool_candidates(\d+)", key)
            if match and value is not None:
                candidates[int(match.group(1))] = id_list(value, path=path, line=line, name=key)
        for size, names in candidates.items():
            unknown = [n for n in names if n not in catalog]
            if unknown:
                raise InputError(f"offered tool {unknown[0]!r} is not in the tool definitions", file=str(path),
                                 line=line, field=f"candidates.{size}")
            missing = [c.name for c in expected if c.name not in names]
            if missing:
                raise InputError(f"expected tool {missing[0]!r} is not among the {size} offered", file=str(path),
                                 line=line, field=f"candidates.{size}")
        unknown = [c.name for c in expected if c.name not in catalog]
        if unknown:
            raise InputError(f"expected tool {unknown[0]!r} is not in the tool definitions", file=str(path),
                             line=line, field="expected")
        kb_ids = id_list(field(row, "kb_ids", "kbs"), path=path, line=line, name="kb_ids")
        cases.append(ToolCase(case_id=case_id, messages=_conversation(row, path, line), expected=expected,
                              candidates=dict(sorted(candidates.items())), kb_ids=kb_ids))
    return cases


# -- KB refinement --------------------------------------------------------------------------------------

def read_pair(value: Any, *, path: Path, line: int, name: str) -> frozenset[str]:
    items = id_list(value, path=path, line=line, name=name)
    if len(items) != 2:
        raise InputError(f"a pair has two article ids, got {len(items)}", file=str(path), line=line, field=name)
    a, b = items
    if a == b:
        raise InputError(f"a pair needs two different articles, got {a!r} twice", file=str(path), line=line,
                         field=name)
    return frozenset((a, b))


def _pair_kind(value: Any, path: Path, line: int) -> str:
    kind = str(value or "").strip().lower()
    kind = {"similarity": "similar", "contradiction": "contradictory", "contradicting": "contradictory"}.get(kind, kind)
    if kind not in PAIR_KINDS:
        raise InputError(f"kind must be one of {', '.join(PAIR_KINDS)}, got {value!r}", file=str(path), line=line,
                         field="kind")
    return kind


def load_pairs(folder: Path) -> dict[str, set[frozenset[str]]]:
    """Gold unordered pairs by kind, from kb_pairs.jsonl or the release's KB_Refinement splits."""
    gold: dict[str, set[frozenset[str]]] = {}
    plain = find_file(folder, ("kb_pairs.jsonl",))
    if plain is not None:
        for line, row in read_rows(plain):
            kind = _pair_kind(row.get("kind"), plain, line)
            pair_value = row.get("pair") if row.get("pair") is not None else [row.get("a"), row.get("b")]
            gold.setdefault(kind, set()).add(read_pair(pair_value, path=plain, line=line, name="pair"))
        return gold
    for split, kind in (("similarity_pairs", "similar"), ("contradictory_pairs", "contradictory")):
        path = find_file(folder, (), (("KB_Refinement", split),))
        if path is None:
            continue
        for line, row in read_rows(path):
            gold.setdefault(kind, set()).add(read_pair(field(row, "Pairs", "pair"), path=path, line=line, name="Pairs"))
    if not gold:
        raise InputError("no KB-refinement pairs found (looked for kb_pairs.jsonl, "
                         "KB_Refinement/similarity_pairs|contradictory_pairs)", file=str(folder))
    return gold


# -- article search -------------------------------------------------------------------------------------

def load_search(folder: Path) -> list[SearchQuery]:
    path = require_file(folder, "article-search queries", ("search_queries.jsonl",), (("Article_Search", "train"),))
    queries = []
    seen: set[str] = set()
    for line, row in read_rows(path):
        query_id = _str_id(field(row, "query_id", "id"), str(line))
        if query_id in seen:
            raise InputError(f"query id {query_id!r} repeats", file=str(path), line=line, field="query_id")
        seen.add(query_id)
        text = field(row, "query", "question")
        relevant = field(row, "relevant", "True KB ID", "kb_ids")
        if not isinstance(text, str) or not text.strip():
            raise InputError("missing query text", file=str(path), line=line, field="query")
        ids = id_list(relevant, path=path, line=line, name="relevant")
        if not ids:
            raise InputError("no relevant article id", file=str(path), line=line, field="relevant")
        queries.append(SearchQuery(query_id=query_id, query=text, relevant=ids))
    return queries


# -- multi-turn RAG answer classification ---------------------------------------------------------------

def load_rag(folder: Path) -> list[RagCase]:
    path = require_file(folder, "multi-turn RAG cases", ("multi_turn.jsonl",), (("Multi_Turn", "train"),))
    cases = []
    occurrences: dict[str, int] = {}
    seen: set[str] = set()
    for line, row in read_rows(path):
        explicit = field(row, "case_id")
        if explicit is not None:
            case_id = str(explicit)
        else:  # the release has several turns per conversation_id
            conv = _str_id(field(row, "conversation_id"), str(line))
            occurrences[conv] = occurrences.get(conv, 0) + 1
            case_id = f"{conv}.{occurrences[conv]}"
        if case_id in seen:
            raise InputError(f"case id {case_id!r} repeats", file=str(path), line=line, field="case_id")
        seen.add(case_id)
        retrieved = field(row, "retrieved_ids")
        label = field(row, "label")
        if label is not None and normalize_class(label) is None:
            raise InputError(f"label must be Correct, Incorrect, Hallucination or Refusal, got {label!r}",
                             file=str(path), line=line, field="label")
        cases.append(RagCase(
            case_id=case_id, messages=_conversation(row, path, line),
            reference=_text(field(row, "reference", "correct_agent_response"), path, line, "reference"),
            kb_ids=id_list(field(row, "kb_ids", "kbs"), path=path, line=line, name="kb_ids"),
            retrieved_ids=None if retrieved is None else id_list(retrieved, path=path, line=line,
                                                                 name="retrieved_ids"),
            response=_text(field(row, "response"), path, line, "response"), label=normalize_class(label),
        ))
    return cases
