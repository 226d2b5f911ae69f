"""Pipeline specs, hybrid RRF, and the reference+rag / rag generation settings of `ragjudge eval`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import MINI, REPO, run_cli
from ragjudge.errors import InputError, UsageError
from ragjudge.bench.mtrag import settings
from ragjudge.formats.mtrag import read_tasks
from ragjudge.models import Passage
from ragjudge.retrieval.hybrid import rrf
from ragjudge.retrieval.pipeline import Pipeline
from ragjudge.retrieval.registry import build_retriever
from ragjudge.retrieval.spec import PipelineSpec, RetrieverSpec, available_pipelines, load_pipeline


def test_every_builtin_spec_loads_and_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    specs = available_pipelines()
    assert {"bm25", "bm25_rewrite", "dense", "elser", "hybrid", "es_bm25", "es_knn", "bge"} <= set(specs)
    es_url = "http://127.0.0.1:9"  # nothing listens there: building must not contact the cluster
    on_es = []
    for name in specs:
        spec = load_pipeline(name)
        assert spec.name == name and spec.source.endswith(f"{name}.yaml") and spec.k == 10
        monkeypatch.delenv("RAGJUDGE_ES_URL", raising=False)
        if spec.retriever.name == "elasticsearch":
            on_es.append(name)
            # without a cluster URL: a usage error naming the variable, never a silent localhost:9200
            with pytest.raises(UsageError, match=rf"^pipeline {name} searches an Elasticsearch cluster: set "
                                                 r"RAGJUDGE_ES_URL to its URL"):
                build_retriever(spec.retriever, source=spec.source)
            monkeypatch.setenv("RAGJUDGE_ES_URL", es_url)
        retriever = build_retriever(spec.retriever, source=spec.source)  # models and clients load lazily
        assert retriever.kind == spec.retriever.name
        if name in on_es:
            assert retriever.url == es_url
    assert {"elser", "es_bm25", "es_knn"} <= set(on_es)
    assert load_pipeline("bm25_rewrite").query.strategy == "rewrite"
    assert load_pipeline("elser").retriever.options["mode"] == "elser"


def test_user_spec_folders(tmp_path: Path) -> None:
    (tmp_path / "bm25.yaml").write_text("description: mine\nretriever: {name: bm25, options: {k1: 0.9}}\nk: 3\n")
    (tmp_path / "wrong.yaml").write_text("name: other\nretriever: {name: bm25}\n")
    (tmp_path / "typo.yaml").write_text("retriever: {name: bm25}\nqeury: {strategy: rewrite}\n")
    assert load_pipeline("bm25", [tmp_path]).retriever.options == {"k1": 0.9}  # user folders override
    assert load_pipeline(str(tmp_path / "bm25.yaml")).k == 3
    with pytest.raises(InputError, match="name 'other' must match the file name 'wrong'"):
        load_pipeline("wrong", [tmp_path])
    with pytest.raises(InputError, match=r"typo.yaml: field 'qeury': Extra inputs are not permitted"):
        load_pipeline("typo", [tmp_path])
    with pytest.raises(UsageError, match=r"unknown pipeline 'nope' \(available: .*bm25"):
        load_pipeline("nope")
    with pytest.raises(UsageError, match="pipeline spec folder not found"):
        load_pipeline("bm25", [tmp_path / "missing"])


def _p(pid: str) -> Passage:
    return Passage(id=pid, text=pid)


def test_rrf_scores() -> None:
    fused = rrf([[_p("a"), _p("b"), _p("c")], [_p("c"), _p("a")]], [1.0, 1.0], rrf_k=60, k=3)
    assert [p.document_id for p in fused] == ["a", "c", "b"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused[1].score == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2].score == pytest.approx(1 / 62)
    weighted = rrf([[_p("a")], [_p("b")]], [1.0, 2.0], rrf_k=60, k=2)
    assert [p.document_id for p in weighted] == ["b", "a"]


def test_hybrid_of_two_bm25_saves_and_reuses(tmp_path: Path) -> None:
    spec = PipelineSpec(name="h", retriever=RetrieverSpec(name="hybrid", options={"retrievers": [
        {"retriever": "bm25", "options": {"stemmer": None}}, {"retriever": "bm25", "options": {"k1": 0.5}}],
        "depth": 20}))
    pipe = Pipeline(spec, index_dir=tmp_path)
    assert pipe.open(MINI / "corpus.jsonl").reused is False
    hits = pipe.search(["how long is a day on mars"], k=5)[0]
    members = [m.search("how long is a day on mars", 20) for m in pipe.retriever.members]
    expected = rrf(members, [1.0, 1.0], 60, 5)
    assert [(h.document_id, h.score) for h in hits] == [(h.document_id, h.score) for h in expected]
    assert hits[0].document_id.startswith("astro-mars")
    again = Pipeline(spec, index_dir=tmp_path)
    assert again.open(MINI / "corpus.jsonl").reused is True
    assert [h.document_id for h in again.search(["how long is a day on mars"], k=5)[0]] == \
        [h.document_id for h in hits]


def test_hybrid_reuses_the_dense_and_bm25_indexes_of_their_own_pipelines(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The built-in hybrid fuses the `bm25` and `dense` pipelines: over a corpus they already indexed it
    encodes nothing and tokenises nothing, and the fused ranking is RRF of theirs."""
    from ragjudge.retrieval.bm25 import BM25Retriever
    from ragjudge.retrieval.dense import DenseRetriever
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join((MINI / "corpus.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)[:30]))
    query = "how long is a day on mars"
    dense, bm25 = Pipeline(load_pipeline("dense"), index_dir=tmp_path), Pipeline(load_pipeline("bm25"), index_dir=tmp_path)
    assert dense.open(corpus).reused is False and bm25.open(corpus).reused is False
    expected = rrf([dense.search([query], 100)[0], bm25.search([query], 100)[0]], [1.0, 1.0], 60, 10)

    encoded: list[int] = []
    real_encode = SentenceTransformerEncoder.encode

    def counting_encode(self, texts, *args, **kwargs):
        encoded.append(len(texts))
        return real_encode(self, texts, *args, **kwargs)

    indexed: list[str] = []
    monkeypatch.setattr(SentenceTransformerEncoder, "encode", counting_encode)
    monkeypatch.setattr(DenseRetriever, "index", lambda self, *a, **k: indexed.append("dense"))
    monkeypatch.setattr(BM25Retriever, "index", lambda self, *a, **k: indexed.append("bm25"))
    hybrid = Pipeline(load_pipeline("hybrid"), index_dir=tmp_path)
    info = hybrid.open(corpus)
    assert info.reused is True and indexed == [] and encoded == []  # no passage encoded or tokenised again
    assert sorted(info.members or []) == sorted([str(dense.info.folder), str(bm25.info.folder)])
    hits = hybrid.search([query], 10)[0]
    assert encoded == [1]  # only the query
    assert [(h.document_id, round(h.score, 9)) for h in hits] == [(h.document_id, round(h.score, 9))
                                                                  for h in expected]


def test_generation_settings() -> None:
    tasks = read_tasks(MINI / "tasks.jsonl")
    with_refs = next(t for t in tasks if len(t.contexts) == 2)
    unanswerable = next(t for t in tasks if t.answerability == "UNANSWERABLE")
    ref_id = with_refs.contexts[1].document_id
    retrieved = {with_refs.key: [Passage(id=f"r{i}", text="x", score=10.0 - i) for i in range(3)]
                 + [Passage(id=ref_id, text="dup", score=4.0)] + [Passage(id=f"s{i}", text="y", score=3.0 - i)
                                                                for i in range(3)],
                 unanswerable.key: [Passage(id=f"u{i}", text="z", score=1.0 - i / 10) for i in range(7)]}
    [ref_rag, un_ref_rag] = settings.generation_inputs([with_refs, unanswerable], "reference+rag", retrieved)
    assert [p.document_id for p in ref_rag.passages] == [with_refs.contexts[0].document_id, ref_id, "r0", "r1", "r2"]
    assert [p.metadata["origin"] for p in ref_rag.passages] == ["reference"] * 2 + ["retrieved"] * 3
    assert [p.score for p in ref_rag.passages] == [10.0, 4.0, 10.0, 9.0, 8.0]  # a retrieved reference keeps its score
    assert [p.document_id for p in un_ref_rag.passages] == ["u0", "u1", "u2", "u3", "u4"]
    [rag] = settings.generation_inputs([with_refs], "rag", retrieved)
    assert [p.document_id for p in rag.passages] == ["r0", "r1", "r2", ref_id, "s0"]
    [ref] = settings.generation_inputs([unanswerable], "reference")
    assert ref.passages == []
    three = with_refs.model_copy(update={"task_id": "x::9", "contexts": with_refs.contexts + [_p("extra")]})
    assert settings.tasks_for_setting([with_refs, three, unanswerable], "reference+rag") == [with_refs, unanswerable]
    assert settings.tasks_for_setting(tasks, "rag") == tasks
    with pytest.raises(UsageError, match="needs retrieved passages"):
        settings.generation_inputs(tasks, "rag")
    with pytest.raises(UsageError, match=r"unknown setting 'magic' \(available: reference, reference\+rag, rag\)"):
        settings.check_setting("magic")


def test_eval_rag_setting_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAGJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    code, stdout, stderr = run_cli(["eval", "--bench", str(MINI / "tasks.jsonl"), "--gen", "extractive",
                                    "-T", "setting=rag", "--pipeline", "bm25", "--corpus", str(MINI / "corpus.jsonl"),
                                    "--judges", "idk_lexical", "--out", str(out), "--format", "json"],
                                   monkeypatch, capsys)
    assert code == 0, stderr
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(results) == 40
    for record in results:
        contexts = record["contexts"]
        assert 1 <= len(contexts) <= 5
        assert all(isinstance(c["document_id"], str) and isinstance(c["score"], float) for c in contexts)
        assert all(c["origin"] == "retrieved" for c in contexts)
        assert [c["score"] for c in contexts] == sorted((c["score"] for c in contexts), reverse=True)
    mars = next(r for r in results if r["task_id"] == "mini-c01::1")
    assert mars["contexts"][0]["document_id"].startswith("astro-mars")
    run_info = json.loads((out / "run.json").read_text())
    assert run_info["setting"] == "rag" and run_info["pipeline"]["spec"]["name"] == "bm25"
    assert run_info["pipeline"]["retriever"]["options"]["stemmer"] == "english"
    assert run_info["pipeline"]["query_strategy"] == {"strategy": "last_turn"}
    assert json.loads(stdout)["details"]["pipeline"] == "bm25"
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert len(predictions) == 40

    code, _, stderr = run_cli(["eval", "--bench", str(MINI / "tasks.jsonl"), "--gen", "extractive", "-T",
                               "setting=reference+rag", "--pipeline", "bm25", "--corpus", str(MINI / "corpus.jsonl"),
                               "--judges", "idk_lexical", "--out", str(tmp_path / "rr"), "--format", "json"],
                              monkeypatch, capsys)
    assert code == 0, stderr
    results = [json.loads(line) for line in (tmp_path / "rr" / "results.jsonl").read_text().splitlines()]
    tasks = {t.task_id: t for t in read_tasks(MINI / "tasks.jsonl")}
    assert len(results) == sum(1 for t in tasks.values() if len(t.contexts) <= 2)
    for record in results:
        refs = [p.document_id for p in tasks[record["task_id"]].contexts]
        assert [c["document_id"] for c in record["contexts"]][: len(refs)] == refs
        assert len(record["contexts"]) == 5


@pytest.mark.parametrize("args, message", [
    (["-T", "setting=rag"], "error: -T setting=rag retrieves passages: pass --pipeline NAME and --corpus FILE"),
    (["--pipeline", "bm25"], "error: --pipeline, --corpus, --rewrite-model, --pipeline-dir and --index-dir are for "
                             "-T setting=reference+rag or rag"),
    (["-T", "setting=rag", "--pipeline", "bm25"], "error: pipeline bm25 (bm25) indexes a corpus: pass --corpus FILE"),
    (["-T", "setting=rag", "--pipeline", "bm25_rewrite", "--corpus", "c.jsonl"],
     "error: pipeline bm25_rewrite rewrites queries: pass --rewrite-model MODEL (or set query.model)"),
    (["-T", "setting=rag", "--pipeline", "nope", "--corpus", "c.jsonl"], "error: unknown pipeline 'nope'"),
])
def test_eval_setting_errors(args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    code, _, stderr = run_cli(["eval", "--bench", str(MINI / "tasks.jsonl"), "--gen", "extractive",
                               "--out", str(tmp_path / "o"), *args], monkeypatch, capsys)
    assert code == 2 and stderr.startswith(message) and len(stderr.strip().splitlines()) == 1


def test_specs_ship_in_the_repo() -> None:
    assert (REPO / "pipelines" / "bm25.yaml").is_file()


def test_two_processes_building_the_same_index_keep_the_first(tmp_path: Path) -> None:
    """Another process may finish the same index (same key, same content) while this one is saving."""
    import shutil

    spec = PipelineSpec(name="b", retriever=RetrieverSpec(name="bm25"))
    other = Pipeline(spec, index_dir=tmp_path / "other")
    other.open(MINI / "corpus.jsonl")
    finished = other.info.folder
    this = Pipeline(spec, index_dir=tmp_path / "shared")
    save = this.retriever.save

    def save_while_the_other_finishes(target: Path) -> None:
        save(target)
        shutil.copytree(finished, tmp_path / "shared" / finished.name)  # the other process renames first

    this.retriever.save = save_while_the_other_finishes  # type: ignore[method-assign]
    info = this.open(MINI / "corpus.jsonl")
    assert info.reused is False and info.folder == tmp_path / "shared" / finished.name
    for file in (f for f in finished.rglob("*") if f.is_file()):  # the other's index was kept, not replaced
        assert (info.folder / file.relative_to(finished)).read_bytes() == file.read_bytes()
    assert not list((tmp_path / "shared").glob("*.tmp-*"))  # our copy was dropped, nothing left behind
    assert this.search(["how long is a day on mars"], k=3)[0][0].document_id.startswith("astro-mars")
