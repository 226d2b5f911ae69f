"""Corpus ingestion (512/100-token passages with offset ids) and BEIR corpus/queries/qrels files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from ragjudge.errors import InputError
from ragjudge.formats.beir import (
    Query,
    read_corpus,
    read_qrels,
    read_queries,
    write_corpus,
    write_qrels,
    write_queries,
)
from ragjudge.models import Passage
from ragjudge.retrieval.corpus import (
    ChunkingSpec,
    WhitespaceTokenizer,
    chunk_document,
    get_tokenizer,
    load_passages,
)


def _doc(n_words: int, doc_id: str = "doc7", title: str | None = "A title") -> Passage:
    return Passage(id=doc_id, title=title, text=" ".join(f"w{i}" for i in range(n_words)))


def test_whitespace_chunks_are_exact_overlapping_windows() -> None:
    doc = _doc(1000)
    passages = chunk_document(doc, WhitespaceTokenizer(), size=512, overlap=100)
    # windows start every 412 tokens; the last one ends at the last token
    starts = [0, 412, 824]
    assert len(passages) == 3
    for passage, first in zip(passages, starts, strict=True):
        words = passage.text.split()
        assert words[0] == f"w{first}"
        assert len(words) == min(512, 1000 - first)
        start, end = map(int, passage.document_id.removeprefix("doc7_").split("-"))
        assert doc.text[start:end] == passage.text  # ids are character offsets into the document
        assert passage.title == "A title"
    assert passages[0].text.split()[-100:] == passages[1].text.split()[:100]  # 100-token overlap
    assert passages[-1].text.split()[-1] == "w999"


def test_short_and_empty_documents() -> None:
    tok = WhitespaceTokenizer()
    one = chunk_document(_doc(512), tok)
    assert len(one) == 1 and one[0].document_id == f"doc7_0-{len(_doc(512).text)}"
    assert len(chunk_document(_doc(513), tok)) == 2
    assert chunk_document(Passage(id="e", text="   "), tok) == []
    with pytest.raises(Exception, match="overlap"):
        chunk_document(_doc(10), tok, size=10, overlap=10)
    with pytest.raises(ValueError, match="overlap"):
        ChunkingSpec(size=100, overlap=100)


def test_ids_are_stable_when_the_corpus_grows(tmp_path: Path) -> None:
    a = chunk_document(_doc(900, "x"), WhitespaceTokenizer())
    b = chunk_document(_doc(900, "x"), WhitespaceTokenizer())
    assert [p.document_id for p in a] == [p.document_id for p in b]


def test_minilm_tokenizer_counts_word_pieces() -> None:
    tok = get_tokenizer("minilm")
    text = "Photosynthesis converts sunlight " * 400  # several word pieces per word
    passages = chunk_document(Passage(id="p", text=text, title=None), tok, size=512, overlap=100)
    spans = tok.spans(text)
    assert len(spans) > 1200
    assert len(passages) == 1 + -(-(len(spans) - 512) // 412)
    for passage in passages:
        assert len(tok.spans(passage.text)) <= 512 + 2  # re-tokenising a slice may split one edge piece
    first_end = int(passages[0].document_id.split("_")[1].split("-")[1])
    second_start = int(passages[1].document_id.split("_")[1].split("-")[0])
    assert sum(1 for s, e in spans if s >= second_start and e <= first_end) == 100


def test_beir_round_trip(tmp_path: Path) -> None:
    passages = [Passage(id="d1_0-5", title="T", text="hello"), Passage(id="d2", title=None, text="world")]
    write_corpus(tmp_path / "c.jsonl", passages)
    again = list(read_corpus(tmp_path / "c.jsonl"))
    assert [(p.document_id, p.title, p.text) for p in again] == [("d1_0-5", "T", "hello"), ("d2", None, "world")]
    write_queries(tmp_path / "q.jsonl", [Query(id="c<::>2", text="why?")])
    assert read_queries(tmp_path / "q.jsonl") == [Query(id="c<::>2", text="why?")]
    write_qrels(tmp_path / "qrels.tsv", {"c<::>2": {"d1_0-5": 1, "d2": 0}})
    assert (tmp_path / "qrels.tsv").read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"
    assert read_qrels(tmp_path / "qrels.tsv") == {"c<::>2": {"d1_0-5": 1, "d2": 0}}


@pytest.mark.parametrize("line, field, message", [
    ('{"_id": "a", "title": "t"}', "text", "got missing"),
    ('{"_id": "a", "text": 5}', "text", "got a number"),
    ('{"title": "t", "text": "x"}', "_id", "is missing"),
    ('{"_id": "a", "text": "x", "title": ["no"]}', "title", "must be a string"),
    ('{"_id": "b", "text": "x"}', "_id", "duplicate id 'b'"),
    ('not json', None, "invalid JSON"),
])
def test_bad_corpus_lines_name_file_line_and_field(tmp_path: Path, line: str, field: str | None,
                                                   message: str) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "b", "text": "fine"}\n' + line + "\n")
    with pytest.raises(InputError) as info:
        list(read_corpus(path))
    assert info.value.line == 2 and info.value.field == field and info.value.file == str(path)
    assert message in str(info.value)


def test_bad_queries_and_qrels(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text('{"_id": "1", "text": "ok"}\n{"_id": "2", "text": "  "}\n')
    with pytest.raises(InputError, match=r"q.jsonl:2: field 'text': is empty"):
        read_queries(tmp_path / "q.jsonl")
    (tmp_path / "r.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\tyes\n")
    with pytest.raises(InputError, match=r"r.tsv:2: field 'score'"):
        read_qrels(tmp_path / "r.tsv")


def test_load_passages_chunks_documents(tmp_path: Path) -> None:
    write_corpus(tmp_path / "docs.jsonl", [_doc(700, "d1"), _doc(100, "d2")])
    chunked = load_passages(tmp_path / "docs.jsonl", ChunkingSpec(tokenizer="whitespace"))
    assert [p.document_id.split("_")[0] for p in chunked] == ["d1", "d1", "d2"]
    assert len(load_passages(tmp_path / "docs.jsonl")) == 2


def test_cli_bad_corpus_line_is_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "a", "text": "alpha"}\n{"_id": "b", "txt": "beta"}\n')
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"_id": "q1", "text": "alpha"}) + "\n")
    code, _, err = run_cli(["retrieve", "--corpus", str(corpus), "--queries", str(queries), "--pipeline", "bm25",
                            "--out", str(tmp_path / "run.jsonl"), "--index-dir", str(tmp_path / "idx")],
                           monkeypatch, capsys)
    assert code == 2
    assert err.strip() == f"error: {corpus}:2: field 'text': must be a string, got missing"


def test_cli_chunk_option_indexes_passages_of_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from ragjudge.cli import main

    body = " ".join(["Olympus Mons is the tallest volcano on Mars."] * 150)  # ~1,500 word pieces
    write_corpus(tmp_path / "docs.jsonl", [Passage(id="mars", title="Mars", text=body),
                                           Passage(id="bread", title="Bread", text="Yeast makes bread rise.")])
    (tmp_path / "q.jsonl").write_text('{"_id": "q1", "text": "tallest volcano"}\n')
    monkeypatch.setattr(sys, "argv", ["ragjudge", "retrieve", "--corpus", str(tmp_path / "docs.jsonl"), "--queries",
                                      str(tmp_path / "q.jsonl"), "--pipeline", "bm25", "--chunk", "--out",
                                      str(tmp_path / "run.jsonl"), "--index-dir", str(tmp_path / "idx"),
                                      "--format", "json"])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pipeline"]["spec"]["chunking"] == {"size": 512, "overlap": 100, "tokenizer": "minilm"}
    assert summary["pipeline"]["index"]["passages"] == 5  # 4 windows of the long document + 1
    contexts = json.loads((tmp_path / "run.jsonl").read_text())["contexts"]
    assert len(contexts) == 4 and all(c["document_id"].startswith("mars_") for c in contexts)
    for context in contexts:
        start, end = map(int, context["document_id"].removeprefix("mars_").split("-"))
        assert body[start:end] == context["text"] and context["title"] == "Mars"
