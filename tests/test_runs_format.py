"""Run and qrels files: MTRAG retrieval predictions, TREC runs, BEIR and TREC qrels; ranking rule; errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragjudge.errors import InputError
from ragjudge.formats.runs import (Hit, Run, read_mtrag_run, read_qrels, read_run, read_trec_run, write_mtrag_run,
                                   write_qrels, write_trec_run)

COLLECTION = "mt-rag-clapnq-elser-512-100-20240503"


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def mtrag_line(task_id: str, contexts: list[tuple[str, float]], **extra) -> str:
    return json.dumps({"task_id": task_id, "Collection": COLLECTION,
                       "contexts": [{"document_id": d, "score": s, "text": f"text of {d}", "title": f"T {d}",
                                     "source": "wiki"} for d, s in contexts], **extra})


def ranking(run: Run, key: str) -> list[str]:
    return [h.doc_id for h in run.rankings[key]]


def test_mtrag_run_keeps_ids_collection_text_and_ranks_by_score_with_ties_in_list_order(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "run.jsonl", [
        mtrag_line("c1<::>2", [("b", 5.0), ("a", 9.0), ("c", 5.0), ("d", 1.0)]),
        mtrag_line("c1<::>3", []),
    ])
    run = read_run(path)
    assert run.name == "run" and len(run) == 2
    assert list(run.rankings) == ["c1::2", "c1::3"]
    assert run.ids["c1::2"] == "c1<::>2" and run.collections["c1::2"] == COLLECTION
    assert ranking(run, "c1::2") == ["a", "b", "c", "d"]  # 9 first; b and c tie at 5 and keep file order
    top = run.rankings["c1::2"][0]
    assert (top.text, top.title, top.extra) == ("text of a", "T a", {"source": "wiki"})
    assert run.rankings["c1::3"] == []


def test_trec_run_orders_by_score_then_rank_column(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "run.trec", [
        "q1 Q0 d3 3 1.0 sys",
        "q1 Q0 d1 1 2.5 sys",
        "q1 Q0 d2 2 1.0 sys",   # ties with d3 on score; rank 2 < 3 puts it first
        "c<::>2 Q0 x 1 0.3 sys",
    ])
    run = read_run(path)
    assert ranking(run, "q1") == ["d1", "d2", "d3"]
    assert run.ids["c::2"] == "c<::>2" and not run.collections


def test_trec_round_trip_of_an_mtrag_run(tmp_path: Path) -> None:
    src = read_mtrag_run(write_lines(tmp_path / "run.jsonl", [
        mtrag_line("c1<::>2", [("p1", 0.9), ("p2", 0.25), ("p3", 0.125)]),
        mtrag_line("c2<::>1", [("p9", 12.5), ("p1", 3.0)]),
    ]))
    write_trec_run(src, tmp_path / "run.trec", tag="bm25")
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert lines[0] == "c1<::>2 Q0 p1 1 0.9 bm25" and lines[-1] == "c2<::>1 Q0 p1 2 3.0 bm25"
    back = read_trec_run(tmp_path / "run.trec")
    for key in src.rankings:
        assert [(h.doc_id, h.score) for h in back.rankings[key]] == [(h.doc_id, h.score) for h in src.rankings[key]]
    assert back.ids == src.ids


def test_mtrag_round_trip_keeps_text_title_collection(tmp_path: Path) -> None:
    run = Run(name="dense")
    run.add("c<::>4", [Hit("b", 0.5, "tb", "Tb"), Hit("a", 0.75, "ta", None, {"source": "x"})], collection=COLLECTION)
    write_mtrag_run(run, tmp_path / "out.jsonl")
    record = json.loads((tmp_path / "out.jsonl").read_text())
    assert record == {"task_id": "c<::>4", "Collection": COLLECTION, "contexts": [
        {"document_id": "a", "score": 0.75, "text": "ta", "source": "x"},
        {"document_id": "b", "score": 0.5, "text": "tb", "title": "Tb"}]}
    again = read_run(tmp_path / "out.jsonl")
    assert again.rankings == run.rankings and again.collections == run.collections


def test_trec_writer_refuses_ids_with_spaces(tmp_path: Path) -> None:
    run = Run()
    run.add("query one", [Hit("d", 1.0)])
    with pytest.raises(InputError, match="query id 'query one'"):
        write_trec_run(run, tmp_path / "x.trec")


def test_beir_and_trec_qrels_read_the_same_judgments(tmp_path: Path) -> None:
    beir = write_lines(tmp_path / "qrels.tsv", ["query-id\tcorpus-id\tscore", "c<::>2\td1\t1", "c<::>2\td2\t0",
                                                "c::3\td3\t2"])
    trec = write_lines(tmp_path / "qrels.txt", ["c::2 0 d1 1", "c::2 0 d2 0", "c<::>3 0 d3 2"])
    headerless = write_lines(tmp_path / "plain.tsv", ["c::2\td1\t1", "c::2\td2\t0", "c::3\td3\t2"])
    expected = {"c::2": {"d1": 1, "d2": 0}, "c::3": {"d3": 2}}
    for path in (beir, trec, headerless):
        assert read_qrels(path).judgments == expected
    q = read_qrels(beir)
    assert q.ids == {"c::2": "c<::>2", "c::3": "c::3"} and q.relevant("c::2") == {"d1": 1}
    for fmt in ("beir", "trec"):
        write_qrels(q, tmp_path / f"out.{fmt}", fmt=fmt)
        assert read_qrels(tmp_path / f"out.{fmt}").judgments == expected


def test_qrels_merge_unions_and_rejects_conflicts(tmp_path: Path) -> None:
    a = read_qrels(write_lines(tmp_path / "a.tsv", ["q::1\td1\t1"]))
    b = read_qrels(write_lines(tmp_path / "b.tsv", ["q::1\td2\t1", "r::1\td1\t1"]))
    assert a.merge(b).judgments == {"q::1": {"d1": 1, "d2": 1}, "r::1": {"d1": 1}}
    c = read_qrels(write_lines(tmp_path / "c.tsv", ["q::1\td1\t0"]))
    with pytest.raises(InputError, match="judged 1 in .*a.tsv and 0"):
        a.merge(c)


BAD_RUNS = [
    ("run.trec", ["q1 Q0 d1 1 0.5 t", "q1 Q0 d2 2 0.4"], 2, None, "expected 6 whitespace-separated fields"),
    ("run.trec", ["q1 Q0 d1 one 0.5 t"], 1, "rank", "must be an integer"),
    ("run.trec", ["q1 Q0 d1 1 high t"], 1, "score", "must be a finite number"),
    ("run.trec", ["q1 Q0 d1 1 nan t"], 1, "score", "must be a finite number"),
    ("run.trec", ["q1 Q0 d1 1 0.5 t", "q1 Q0 d1 2 0.4 t"], 2, "docid", "already ranked"),
    ("run.jsonl", ['{"Collection": "x", "contexts": []}'], 1, "task_id", "missing"),
    ("run.jsonl", [mtrag_line("a::1", [("d", 1.0)]), mtrag_line("a<::>1", [("d", 1.0)])], 2, "task_id",
     "already appears on line 1"),
    ("run.jsonl", ['{"task_id": "a::1", "contexts": {"document_id": "d"}}'], 1, "contexts", "must be a list"),
    ("run.jsonl", [json.dumps({"task_id": "a::1", "contexts": [{"document_id": "d", "score": 1},
                                                              {"document_id": "e", "score": "high"}]})],
     1, "contexts[1].score", "must be a finite number"),
    ("run.jsonl", ['{"task_id": "a::1", "contexts": [{"score": 1}]}'], 1, "contexts[0].document_id", "missing"),
    ("run.jsonl", [json.dumps({"task_id": "a::1", "contexts": [{"document_id": "d", "score": 2},
                                                              {"document_id": "d", "score": 1}]})],
     1, "contexts[1].document_id", "listed twice"),
    ("run.jsonl", [mtrag_line("a::1", []), '{"task_id": "a::2", '], 2, None, "invalid JSON"),
]


@pytest.mark.parametrize(("name", "lines", "line", "field", "message"), BAD_RUNS)
def test_bad_run_lines_name_file_line_and_field(tmp_path: Path, name: str, lines: list[str], line: int,
                                                field: str | None, message: str) -> None:
    path = write_lines(tmp_path / name, lines)
    with pytest.raises(InputError) as exc:
        read_run(path)
    err = exc.value
    assert (err.file, err.line, err.field) == (str(path), line, field)
    assert message in err.message
    assert str(err).startswith(f"{path}:{line}: ")


BAD_QRELS = [
    (["query-id\tcorpus-id\tscore", "q::1\td1\tyes"], 2, "score", "integer relevance grade"),
    (["query-id\tcorpus-id\tscore", "q::1\td1"], 2, None, "expected 3 tab-separated fields"),
    (["query-id\tcorpus-id\tscore", "q::1\td1\t1", "q::1\td1\t0"], 3, "score", "already judged 1"),
    (["q::1\t\t1"], 1, "corpus-id", "is empty"),
    (["q1 0 d1 1", "q1 0 d2 1.5"], 2, "relevance", "integer relevance grade"),
    (["q1 0 d1 1", "q1 0 d2"], 2, None, "expected 4 whitespace-separated fields"),
    (["q1 d1"], 1, None, "not a qrels file"),
]


@pytest.mark.parametrize(("lines", "line", "field", "message"), BAD_QRELS)
def test_bad_qrels_lines_name_file_line_and_field(tmp_path: Path, lines: list[str], line: int, field: str | None,
                                                  message: str) -> None:
    path = write_lines(tmp_path / "qrels.tsv", lines)
    with pytest.raises(InputError) as exc:
        read_qrels(path)
    assert (exc.value.line, exc.value.field) == (line, field)
    assert message in exc.value.message and exc.value.file == str(path)


def test_empty_and_missing_files_are_clear_errors(tmp_path: Path) -> None:
    empty = write_lines(tmp_path / "empty.jsonl", ["", "  "])
    with pytest.raises(InputError, match="empty.jsonl: the run file is empty"):
        read_run(empty)
    with pytest.raises(InputError, match="the qrels file is empty"):
        read_qrels(empty)
    with pytest.raises(InputError, match="nope.trec: file not found"):
        read_run(tmp_path / "nope.trec")
    only_header = write_lines(tmp_path / "h.tsv", ["query-id\tcorpus-id\tscore"])
    with pytest.raises(InputError, match="no judgments"):
        read_qrels(only_header)
