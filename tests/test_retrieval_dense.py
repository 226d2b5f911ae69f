"""Dense retrieval: bundled MiniLM, exact top-k, an embeddings API through litellm, and index reuse."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import MINI

from ragjudge.embeddings.scope import embedding_store_scope
from ragjudge.errors import UsageError
from ragjudge.formats.beir import read_corpus
from ragjudge.llm import LLMGateway, ResponseCache
from ragjudge.retrieval.dense import DenseRetriever, top_k
from ragjudge.retrieval.encoders import EncodingError, LiteLLMEncoder
from ragjudge.retrieval.pipeline import Pipeline
from ragjudge.retrieval.spec import PipelineSpec, RetrieverSpec
from ragjudge.testing.openai_server import OpenAIServer, embed_text


def test_top_k_matches_a_full_sort() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(500, 16)).astype(np.float32)
    queries = rng.normal(size=(70, 16)).astype(np.float32)
    got = top_k(queries, matrix, 7, batch=16)
    for q, hits in zip(queries, got, strict=True):
        scores = matrix @ q
        expected = np.argsort(-scores, kind="stable")[:7]
        assert [i for i, _ in hits] == expected.tolist()
        assert [s for _, s in hits] == pytest.approx(scores[expected].tolist(), rel=1e-5)
    assert len(top_k(queries[:1], matrix[:3], 10)[0]) == 3


@pytest.fixture(scope="module")
def minilm_index(tmp_path_factory: pytest.TempPathFactory) -> tuple[Pipeline, Path]:
    index_dir = tmp_path_factory.mktemp("dense-index")
    spec = PipelineSpec(name="dense", retriever=RetrieverSpec(name="dense", options={"model": "minilm"}))
    pipe = Pipeline(spec, index_dir=index_dir)
    pipe.open(MINI / "corpus.jsonl")
    return pipe, index_dir


def test_bundled_minilm_finds_the_right_passages(minilm_index) -> None:
    pipe, _ = minilm_index
    results = pipe.search(["How long does a day last on Mars?", "Why does dough need to rest?",
                           "Are index funds cheaper than active funds?"], k=3)
    assert results[0][0].document_id.startswith("astro-mars")
    assert results[1][0].document_id.startswith("cook-")
    assert results[2][0].document_id.startswith("fin-")
    assert all(r[0].score >= r[1].score >= r[2].score for r in results)
    assert 0.3 < results[0][0].score <= 1.0  # cosine of normalised vectors


def test_second_open_reuses_the_index_without_encoding(minilm_index) -> None:
    first, index_dir = minilm_index
    folder = next(index_dir.glob("dense-*"))
    mtime = (folder / "embeddings.npy").stat().st_mtime_ns
    second = Pipeline(first.spec, index_dir=index_dir)
    info = second.open(MINI / "corpus.jsonl")
    assert info.reused and info.folder == folder and info.passages == 60
    assert second.retriever.encoder.calls == 0  # no passage was encoded
    hits = second.search(["How long does a day last on Mars?"], k=5)[0]
    assert second.retriever.encoder.calls == 1  # only the query
    assert [h.document_id for h in hits] == \
        [h.document_id for h in first.search(["How long does a day last on Mars?"], k=5)[0]]
    assert (folder / "embeddings.npy").stat().st_mtime_ns == mtime
    # Another model is another index.
    other = Pipeline(PipelineSpec(name="d2", retriever=RetrieverSpec(name="dense", options={
        "model": "minilm", "query_prefix": "query: "})), index_dir=index_dir)
    assert other.index_key("x") != second.index_key("x")


def test_litellm_embeddings_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Passages and queries go through litellm.aembedding to the test server's /v1/embeddings, batched."""
    monkeypatch.setenv("RJ_TEST_EMBED_KEY", "sk-embed-test-key")
    passages = list(read_corpus(MINI / "corpus.jsonl"))
    with OpenAIServer() as server:
        retriever = DenseRetriever({"encoder": "litellm", "model": "openai/text-embedding-3-small",
                                    "api_base": server.base_url, "api_key_env": "RJ_TEST_EMBED_KEY",
                                    "batch_size": 16, "concurrency": 2, "dimensions": 256})
        retriever.index(passages)
        requests = [r for r in server.requests if r.path.endswith("/embeddings")]
        assert sorted(len(r.body["input"]) for r in requests) == [12, 16, 16, 16]  # batches run concurrently
        assert all(r.body["model"] == "text-embedding-3-small" and r.body["dimensions"] == 256 for r in requests)
        expected = np.asarray([embed_text(p.text if p.text.startswith(p.title) else p.title + "\n" + p.text, 256)
                               for p in passages], dtype=np.float32)
        assert np.allclose(retriever.matrix, expected, atol=1e-5)
        retriever.save(tmp_path)
        loaded = DenseRetriever(retriever.options.model_dump())
        loaded.load(tmp_path)
        query = "Mars day sol length hours minutes"
        hits = loaded.search(query, k=3)
        assert len(server.requests) == len(requests) + 1  # loading encoded nothing; the query is one call
    scores = expected @ np.asarray(embed_text(query, 256), dtype=np.float32)
    assert [h.document_id for h in hits] == [passages[i].document_id for i in np.argsort(-scores)[:3]]
    assert hits[0].score == pytest.approx(float(scores.max()), rel=1e-4)
    assert "sk-embed-test-key" not in json.dumps(loaded.describe())


def test_litellm_encoder_on_a_shared_gateway_reencodes_for_free(tmp_path: Path) -> None:
    texts = ["a day on Mars", "bread dough rises", "index funds", "a day on Mars"]
    with OpenAIServer() as server:
        gateway = LLMGateway(cache=ResponseCache(tmp_path), api_base=server.base_url, api_key="sk-shared-test-key")
        encoder = LiteLLMEncoder("openai/text-embedding-3-small", gateway=gateway, batch_size=2, normalize=False)
        first = encoder.encode(texts)
        assert np.allclose(first, [embed_text(t) for t in texts], atol=1e-6)
        # each distinct text is sent once, both batches at once
        assert sorted(r.body["input"] for r in server.requests) == sorted([texts[:2], texts[2:3]])
        again = LiteLLMEncoder("openai/text-embedding-3-small", gateway=gateway, batch_size=3, normalize=False)
        assert np.array_equal(again.encode(texts), first) and len(server.requests) == 2
        # the embedding store answered: not even the gateway was asked
        assert (again.calls, again.encoded, gateway.usage.model("openai/text-embedding-3-small").cached) == (4, 0, 0)
        with embedding_store_scope(None, enabled=False):  # --no-cache for embeddings: the gateway's cache answers
            third = LiteLLMEncoder("openai/text-embedding-3-small", gateway=gateway, batch_size=2, normalize=False)
            assert np.array_equal(third.encode(texts), first) and len(server.requests) == 2
        assert (third.encoded, gateway.usage.model("openai/text-embedding-3-small").cached) == (3, 3)


def test_litellm_encoder_failure_is_an_encoding_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RJ_TEST_EMBED_KEY", raising=False)
    with OpenAIServer() as server:
        encoder = LiteLLMEncoder("openai/text-embedding-3-small", api_base=server.base_url,
                                 api_key_env="RJ_TEST_EMBED_KEY", max_retries=1, backoff_base=0.01, timeout=0.3)
        with pytest.raises(UsageError, match="RJ_TEST_EMBED_KEY"):
            encoder.encode(["x"])
        monkeypatch.setenv("RJ_TEST_EMBED_KEY", "sk-embed-test-key")
        server.hang_next(2, 1.0)  # both attempts time out
        with pytest.raises(EncodingError, match="embedding with openai/text-embedding-3-small failed.*after 2"):
            encoder.encode(["x"])
        assert encoder.requests_sent == 2 and len(server.requests) == 2


def test_retrieve_cli_twice_reuses_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from ragjudge.cli import main

    queries = tmp_path / "q.jsonl"
    queries.write_text('{"_id": "q1", "text": "|user|: How long is a day on Mars?"}\n'
                       '{"_id": "q2", "text": "|user|: what makes bread rise"}\n')
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.jsonl"
        monkeypatch.setattr(sys, "argv", ["ragjudge", "retrieve", "--corpus", str(MINI / "corpus.jsonl"),
                                          "--queries", str(queries), "--pipeline", "bm25", "--out", str(out),
                                          "--index-dir", str(tmp_path / "idx"), "--format", "json"])
        with pytest.raises(SystemExit) as exit_info:
            main()
        assert exit_info.value.code == 0
        outputs.append(json.loads(capsys.readouterr().out))
        if name == "a":
            vocab = next((tmp_path / "idx").glob("bm25-*/bm25s/vocab.index.json"))
            mtime = vocab.stat().st_mtime_ns
    assert outputs[0]["pipeline"]["index"]["reused"] is False
    assert outputs[1]["pipeline"]["index"]["reused"] is True
    assert vocab.stat().st_mtime_ns == mtime
    assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "b.jsonl").read_text()
    first = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert first["task_id"] == "q1" and first["contexts"][0]["document_id"].startswith("astro-mars")


def test_token_counts_need_no_model_load() -> None:
    """A warm `cxm score` counts truncated passages: the tokenizer and limit come from the model's folder, not
    from loading its weights, and agree with the loaded model's own."""
    from ragjudge.retrieval.encoders import SentenceTransformerEncoder

    texts = ["short", "word " * 300, "A passage of ordinary length about a 401k rollover."]
    light = SentenceTransformerEncoder("minilm")
    counts = light.token_counts(texts)
    assert light.max_tokens == 256 and light._model is None
    loaded = SentenceTransformerEncoder("minilm")
    model = loaded._load()
    assert int(model.max_seq_length) == 256
    assert counts == [len(ids) for ids in model.tokenizer(texts, add_special_tokens=True)["input_ids"]]
    assert counts[1] > 256 and counts[0] == 3
