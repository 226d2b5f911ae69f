"""Elasticsearch retriever: exactly what is sent (mappings, ingest pipeline, bulk, queries) to a recording
stub on 127.0.0.1, error handling, and live tests against a real cluster when RAGJUDGE_ES_URL is set."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from conftest import MINI, run_cli
from ragjudge.formats.beir import read_corpus
from ragjudge.models import Passage
from ragjudge.llm.redact import display_url
from ragjudge.retrieval.es import ElasticsearchError, ElasticsearchRetriever
from ragjudge.retrieval.pipeline import Pipeline
from ragjudge.retrieval.spec import PipelineSpec, RetrieverSpec
from ragjudge.testing.openai_server import OpenAIServer, embed_text

PASSAGES = [Passage(id="p1", title="Mars", text="Mars is red because of iron oxide dust."),
            Passage(id="p2", title="Bread", text="Yeast makes bread dough rise."),
            Passage(id="p3", title="Moons", text="Mars has two small moons, Phobos and Deimos.")]


class StubES:
    """Records every request and answers like a tiny Elasticsearch 9 (enough for the client and helpers)."""

    def __init__(self, reject_ids: set[str] | None = None, throttle_first_bulk: bool = False):
        self.requests: list[dict[str, Any]] = []
        self.indices: dict[str, dict[str, dict[str, Any]]] = {}
        self.reject_ids = reject_ids or set()
        self.throttle = throttle_first_bulk
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode() if length else ""
                path, _, query = self.path.partition("?")
                record = {"method": self.command, "path": path, "query": query, "raw": raw,
                          "headers": {k.lower(): v for k, v in self.headers.items()}}
                owner.requests.append(record)
                status, body = owner.answer(self.command, path, raw)
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("X-Elastic-Product", "Elasticsearch")
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def sent(self, method: str, pattern: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["method"] == method and re.fullmatch(pattern, r["path"])]

    def answer(self, method: str, path: str, raw: str) -> tuple[int, Any]:
        parts = [p for p in path.split("/") if p]
        if method == "GET" and not parts:
            return 200, {"name": "stub", "cluster_name": "stub", "version": {"number": "9.0.0"},
                         "tagline": "You Know, for Search"}
        if parts[:2] == ["_ingest", "pipeline"]:
            return 200, {"acknowledged": True}
        if parts == ["_bulk"]:
            return 200, self.bulk(raw)
        if parts == ["_msearch"]:
            lines = [json.loads(line) for line in raw.splitlines() if line.strip()]
            return 200, {"took": 1, "responses": [self.search(lines[i]["index"], lines[i + 1])
                                                  for i in range(0, len(lines), 2)]}
        index = parts[0]
        if method == "HEAD" and len(parts) == 1:
            return (200 if index in self.indices else 404), None
        if method == "PUT" and len(parts) == 1:
            self.indices[index] = {}
            return 200, {"acknowledged": True, "index": index}
        if method == "DELETE":
            self.indices.pop(index, None)
            return 200, {"acknowledged": True}
        if parts[1:] == ["_count"]:
            return 200, {"count": len(self.indices.get(index, {}))}
        return 200, {"acknowledged": True, "_shards": {"total": 1, "successful": 1, "failed": 0}}

    def bulk(self, raw: str) -> dict[str, Any]:
        lines = [json.loads(line) for line in raw.splitlines() if line.strip()]
        items = []
        for action, source in zip(lines[::2], lines[1::2], strict=True):
            meta = action["index"]
            if self.throttle:
                self.throttle = False
                items.append({"index": {"_index": meta["_index"], "_id": meta["_id"], "status": 429,
                                        "error": {"type": "es_rejected_execution_exception", "reason": "busy"}}})
            elif meta["_id"] in self.reject_ids:
                items.append({"index": {"_index": meta["_index"], "_id": meta["_id"], "status": 400,
                                        "error": {"type": "document_parsing_exception", "reason": "bad text"}}})
            else:
                self.indices.setdefault(meta["_index"], {})[meta["_id"]] = source
                items.append({"index": {"_index": meta["_index"], "_id": meta["_id"], "status": 201}})
        return {"took": 1, "errors": any(i["index"]["status"] >= 300 for i in items), "items": items}

    def search(self, index: str, body: dict[str, Any]) -> dict[str, Any]:
        docs = self.indices.get(index, {})
        words = set(re.findall(r"\w+", json.dumps(body.get("query", {})).lower()))
        scored = sorted(((len(words & set(re.findall(r"\w+", d["text"].lower()))), pid) for pid, d in docs.items()),
                        key=lambda x: (-x[0], x[1]))
        hits = [{"_index": index, "_id": pid, "_score": float(score) + 0.5, "_source": {
            k: docs[pid][k] for k in ("passage_id", "title", "text")}} for score, pid in scored[: body["size"]]]
        return {"hits": {"total": {"value": len(hits), "relation": "eq"}, "hits": hits}, "status": 200}


@pytest.fixture
def stub():
    server = StubES()
    yield server
    server.close()


def test_bm25_index_settings_mappings_bulk_and_query(stub: StubES, tmp_path: Path) -> None:
    retriever = ElasticsearchRetriever({"mode": "bm25", "url": stub.url, "chunk_size": 2})
    retriever.index_key = "abc123"
    retriever.index(PASSAGES)
    [create] = stub.sent("PUT", "/ragjudge-bm25-abc123")
    body = json.loads(create["raw"])
    assert body["settings"] == {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1",
                                "similarity": {"default": {"type": "BM25", "k1": 1.2, "b": 0.75}}}
    assert body["mappings"] == {"dynamic": False, "properties": {
        "passage_id": {"type": "keyword"}, "title": {"type": "text", "analyzer": "standard"},
        "text": {"type": "text", "analyzer": "standard"}}}
    bulks = stub.sent("PUT", "/_bulk") + stub.sent("POST", "/_bulk")
    assert [len(b["raw"].strip().splitlines()) for b in bulks] == [4, 2]  # chunk_size 2: 2 + 1 documents
    first_action, first_source = map(json.loads, bulks[0]["raw"].splitlines()[:2])
    assert first_action == {"index": {"_index": "ragjudge-bm25-abc123", "_id": "p1"}}
    assert first_source == {"passage_id": "p1", "title": "Mars", "text": PASSAGES[0].text}
    assert "pipeline" not in bulks[0]["query"]
    [settings] = stub.sent("PUT", "/ragjudge-bm25-abc123/_settings")
    assert json.loads(settings["raw"]) == {"index": {"refresh_interval": "1s"}}
    assert stub.sent("POST", "/ragjudge-bm25-abc123/_refresh")

    results = retriever.search_many(["why is mars red", "bread yeast"], k=2)
    [msearch] = stub.sent("POST", "/_msearch")
    lines = [json.loads(line) for line in msearch["raw"].splitlines()]
    assert lines[0] == {"index": "ragjudge-bm25-abc123"}
    assert lines[1] == {"size": 2, "_source": ["passage_id", "title", "text"], "query": {"multi_match": {
        "query": "why is mars red", "fields": ["title", "text"], "type": "best_fields"}}}
    assert [p.document_id for p in results[0]] == ["p1", "p3"] and results[1][0].document_id == "p2"
    assert results[0][0].score == 3.5 and results[0][0].title == "Mars"

    retriever.save(tmp_path)
    manifest = json.loads((tmp_path / "elasticsearch.json").read_text())
    assert manifest["index"] == "ragjudge-bm25-abc123" and manifest["count"] == 3
    again = ElasticsearchRetriever({"mode": "bm25", "url": stub.url})
    again.load(tmp_path)
    assert again.search("moons", k=1)[0].document_id == "p3"


def test_elser_pipeline_and_queries(stub: StubES) -> None:
    retriever = ElasticsearchRetriever({"mode": "elser", "url": stub.url, "index": "my-elser",
                                        "elser_model": ".elser_model_2_linux-x86_64"})
    retriever.index(PASSAGES)
    [pipeline] = stub.sent("PUT", "/_ingest/pipeline/ragjudge-elser-elser_model_2_linux-x86_64")
    assert json.loads(pipeline["raw"])["processors"] == [{"inference": {
        "model_id": ".elser_model_2_linux-x86_64",
        "input_output": [{"input_field": "text", "output_field": "ml.tokens"}]}}]
    body = json.loads(stub.sent("PUT", "/my-elser")[0]["raw"])
    assert body["mappings"]["properties"]["ml"] == {"properties": {"tokens": {"type": "sparse_vector"}}}
    bulk = (stub.sent("PUT", "/_bulk") + stub.sent("POST", "/_bulk"))[0]
    assert "pipeline=ragjudge-elser-elser_model_2_linux-x86_64" in bulk["query"]
    assert retriever.query_body("mars moons", 5)["query"] == {"sparse_vector": {
        "field": "ml.tokens", "inference_id": ".elser_model_2_linux-x86_64", "query": "mars moons"}}
    legacy = ElasticsearchRetriever({"mode": "elser", "elser_query": "text_expansion", "url": stub.url})
    assert legacy.query_body("q", 3)["query"] == {"text_expansion": {"ml.tokens": {
        "model_id": ".elser_model_2", "model_text": "q"}}}
    retriever.search_many(["mars moons"], k=2)
    [msearch] = stub.sent("POST", "/_msearch")
    assert json.loads(msearch["raw"].splitlines()[1])["query"]["sparse_vector"]["query"] == "mars moons"


def test_knn_mapping_vectors_and_query(stub: StubES, monkeypatch: pytest.MonkeyPatch) -> None:
    """kNN vectors are computed by ragjudge (here through litellm and the test embeddings server)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with OpenAIServer() as embedder:
        retriever = ElasticsearchRetriever({"mode": "knn", "url": stub.url, "index": "my-knn", "num_candidates": 50,
                                            "encoder": "litellm", "model": "openai/text-embedding-3-small",
                                            "api_base": embedder.base_url, "query_prefix": "query: "})
        retriever.index(PASSAGES)
        retriever.search_many(["red planet"], k=3)
    mapping = json.loads(stub.sent("PUT", "/my-knn")[0]["raw"])["mappings"]["properties"]["embedding"]
    assert mapping == {"type": "dense_vector", "dims": 32, "index": True, "similarity": "cosine"}
    bulk = (stub.sent("PUT", "/_bulk") + stub.sent("POST", "/_bulk"))[0]
    source = json.loads(bulk["raw"].splitlines()[1])
    assert source["embedding"] == pytest.approx(embed_text("Mars is red because of iron oxide dust."), abs=1e-6) \
        or source["embedding"] == pytest.approx(embed_text("Mars\nMars is red because of iron oxide dust."), abs=1e-6)
    query = json.loads(stub.sent("POST", "/_msearch")[0]["raw"].splitlines()[1])
    assert set(query) == {"size", "_source", "knn"}
    assert query["knn"]["field"] == "embedding" and query["knn"]["k"] == 3 and query["knn"]["num_candidates"] == 50
    assert query["knn"]["query_vector"] == pytest.approx(embed_text("query: red planet"), abs=1e-6)


def test_bulk_retries_429_and_reports_rejected_documents(tmp_path: Path) -> None:
    throttled = StubES(throttle_first_bulk=True)
    try:
        retriever = ElasticsearchRetriever({"url": throttled.url, "index": "t", "bulk_backoff": 0.01})
        retriever.index(PASSAGES)
        assert sorted(throttled.indices["t"]) == ["p1", "p2", "p3"]  # p1 was resent after the 429
        assert len(throttled.sent("PUT", "/_bulk") + throttled.sent("POST", "/_bulk")) == 2
    finally:
        throttled.close()
    rejecting = StubES(reject_ids={"p2"})
    try:
        retriever = ElasticsearchRetriever({"url": rejecting.url, "index": "t"})
        with pytest.raises(ElasticsearchError, match=r"rejected 1 of 3 passages; first: id 'p2': "
                                                     r"document_parsing_exception: bad text"):
            retriever.index(PASSAGES)
    finally:
        rejecting.close()


def test_pipeline_reuses_an_existing_es_index(stub: StubES, tmp_path: Path) -> None:
    spec = PipelineSpec(name="es", retriever=RetrieverSpec(name="elasticsearch", options={"url": stub.url}))
    first = Pipeline(spec, index_dir=tmp_path)
    assert first.open(MINI / "corpus.jsonl").reused is False
    creates = len([r for r in stub.requests if r["method"] == "PUT" and r["path"].startswith("/ragjudge-bm25-")
                   and r["path"].count("/") == 1])
    second = Pipeline(spec, index_dir=tmp_path)
    assert second.open(MINI / "corpus.jsonl").reused is True
    assert len([r for r in stub.requests if r["method"] == "PUT" and r["path"].startswith("/ragjudge-bm25-")
                and r["path"].count("/") == 1]) == creates == 1
    stub.indices.clear()  # the index was deleted on the cluster: rebuilt, not trusted
    third = Pipeline(spec, index_dir=tmp_path)
    assert third.open(MINI / "corpus.jsonl").reused is False
    assert len(stub.indices) == 1 and len(next(iter(stub.indices.values()))) == 60


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_unreachable_cluster_is_one_line_without_credentials(tmp_path: Path) -> None:
    """Through the real console script (a subprocess): everything the process prints, library log lines included
    (in-process, pytest's log capture would take those), is one line without the password."""
    port = _closed_port()
    assert display_url(f"https://elastic:s3cret@127.0.0.1:{port}/x") == f"https://127.0.0.1:{port}/x"
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"_id": "q1", "text": "mars"}\n')
    env = {**os.environ, "RAGJUDGE_ES_URL": f"http://elastic:s3cret@127.0.0.1:{port}"}
    proc = subprocess.run([sys.executable, "-m", "ragjudge", "retrieve", "--corpus", str(MINI / "corpus.jsonl"),
                           "--queries", str(queries), "--pipeline", "es_bm25", "--out", str(tmp_path / "r.jsonl"),
                           "--index-dir", str(tmp_path / "idx")], capture_output=True, text=True, env=env,
                          timeout=120)
    assert proc.returncode == 3  # the network said no, not the input
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot reach Elasticsearch at http://127.0.0.1:{port} ")
    assert "s3cret" not in proc.stderr + proc.stdout and "elastic:" not in proc.stderr


def _retrieve(tmp_path: Path, pipeline: str) -> list[str]:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"_id": "q1", "text": "mars"}\n')
    return ["retrieve", "--corpus", str(MINI / "corpus.jsonl"), "--queries", str(queries), "--pipeline", pipeline,
            "--out", str(tmp_path / "out" / "r.jsonl"), "--index-dir", str(tmp_path / "idx")]


@pytest.mark.parametrize("pipeline", ["es_bm25", "es_knn", "elser"])
def test_without_a_cluster_url_the_es_pipelines_say_so_before_any_work(pipeline: str, tmp_path: Path, monkeypatch,
                                                                         capsys) -> None:
    """No RAGJUDGE_ES_URL: one line saying so, exit 2 (a usage error), before any indexing; never a silent try
    of localhost:9200."""
    monkeypatch.delenv("RAGJUDGE_ES_URL", raising=False)
    code, out, err = run_cli(_retrieve(tmp_path, pipeline), monkeypatch, capsys)
    assert code == 2 and out == "", err
    assert err.strip() == (f"error: pipeline {pipeline} searches an Elasticsearch cluster: set RAGJUDGE_ES_URL to "
                           "its URL (http(s)://host:port; the es_bm25, es_knn and elser pipelines read it), or give "
                           "the retriever a url option")
    assert not (tmp_path / "idx").exists() and not (tmp_path / "out" / "r.jsonl").exists()


def test_a_cluster_url_that_is_not_http_is_a_usage_error_before_any_work(tmp_path: Path, monkeypatch,
                                                                         capsys) -> None:
    monkeypatch.setenv("RAGJUDGE_ES_URL", "localhost:9200")
    code, _, err = run_cli(_retrieve(tmp_path, "es_bm25"), monkeypatch, capsys)
    assert code == 2 and err.strip() == "error: Elasticsearch URL must be http(s)://host[:port], got 'localhost:9200'"
    assert not (tmp_path / "idx").exists()


def test_an_unreachable_cluster_is_exit_3_naming_the_url_without_credentials(tmp_path: Path, monkeypatch,
                                                                             capsys) -> None:
    port = _closed_port()
    monkeypatch.setenv("RAGJUDGE_ES_URL", f"https://elastic:s3cret@127.0.0.1:{port}")
    code, out, err = run_cli(_retrieve(tmp_path, "es_bm25"), monkeypatch, capsys)
    assert code == 3 and out == "", err
    [line] = err.strip().splitlines()
    assert line.startswith(f"error: cannot reach Elasticsearch at https://127.0.0.1:{port} (info): ")
    assert "s3cret" not in err and "elastic:" not in err
    assert not (tmp_path / "out" / "r.jsonl").exists()


def test_unknown_retriever_and_bad_option(tmp_path: Path) -> None:
    from ragjudge.errors import InputError, UsageError
    from ragjudge.retrieval.registry import build_retriever
    from ragjudge.retrieval.spec import RetrieverSpec, load_pipeline

    (tmp_path / "mine.yaml").write_text("retriever:\n  name: faiss\n")
    with pytest.raises(InputError, match=r"mine.yaml: field 'retriever.name': unknown retriever 'faiss' "
                                         r"\(available: bm25, dense, elasticsearch, hybrid\)"):
        Pipeline(load_pipeline("mine", [tmp_path]))
    (tmp_path / "mix.yaml").write_text("retriever:\n  name: hybrid\n  options:\n    retrievers: [bm25, {retriever: "
                                       "splade}]\n")
    with pytest.raises(InputError, match=r"mix.yaml: field 'retriever.options.retrievers.1.retriever': unknown "
                                         r"retriever 'splade'"):
        Pipeline(load_pipeline("mix", [tmp_path]))
    with pytest.raises(UsageError, match=r"unknown retriever 'faiss'"):  # no spec file: a usage error
        build_retriever(RetrieverSpec(name="faiss"))
    (tmp_path / "bad.yaml").write_text("retriever:\n  name: elasticsearch\n  options: {mode: colbert}\n")
    with pytest.raises(InputError, match=r"bad.yaml: field 'retriever.options.mode'"):
        Pipeline(load_pipeline("bad", [tmp_path]))


# -- live cluster (RAGJUDGE_ES_URL) ---------------------------------------------------------------

live = pytest.mark.skipif(not os.environ.get("RAGJUDGE_ES_URL"), reason="RAGJUDGE_ES_URL is not set")


@pytest.mark.es_live
@live
@pytest.mark.parametrize("mode", ["bm25", "knn"])
def test_live_cluster(mode: str, tmp_path: Path) -> None:
    spec = PipelineSpec(name=f"live-{mode}", retriever=RetrieverSpec(name="elasticsearch", options={
        "mode": mode, "index": f"ragjudge-test-{mode}"}))
    pipe = Pipeline(spec, index_dir=tmp_path)
    try:
        assert pipe.open(MINI / "corpus.jsonl").passages == len(list(read_corpus(MINI / "corpus.jsonl")))
        hits = pipe.search(["How long is a day on Mars?"], k=3)[0]
        assert hits[0].document_id.startswith("astro-mars")
        assert Pipeline(spec, index_dir=tmp_path).open(MINI / "corpus.jsonl").reused
    finally:
        pipe.retriever.client().indices.delete(index=f"ragjudge-test-{mode}", ignore_unavailable=True)
        pipe.close()


@pytest.mark.es_live
@pytest.mark.skipif(not (os.environ.get("RAGJUDGE_ES_URL") and os.environ.get("RAGJUDGE_ES_ELSER")),
                    reason="needs RAGJUDGE_ES_URL and RAGJUDGE_ES_ELSER=<deployed ELSER model id>")
def test_live_elser(tmp_path: Path) -> None:
    spec = PipelineSpec(name="live-elser", retriever=RetrieverSpec(name="elasticsearch", options={
        "mode": "elser", "index": "ragjudge-test-elser", "elser_model": os.environ["RAGJUDGE_ES_ELSER"],
        "chunk_size": 20}))
    pipe = Pipeline(spec, index_dir=tmp_path)
    try:
        pipe.open(MINI / "corpus.jsonl")
        assert pipe.search(["Why does bread rise?"], k=3)[0][0].document_id.startswith("cook-")
    finally:
        pipe.retriever.client().indices.delete(index="ragjudge-test-elser", ignore_unavailable=True)
        pipe.close()
