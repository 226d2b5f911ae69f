"""`elasticsearch`: BM25, ELSER (learned sparse) or kNN dense retrieval on a cluster, for corpora that outgrow one
machine. Modes, settings, credentials and the missing-URL error: docs/pipelines.md. Beyond them: the spec's `url`
wins over $RAGJUDGE_ES_URL; searches go in batches through `_msearch`; kNN vectors come from the `dense` retriever's
encoders; an unreachable cluster is exit 3 (the network, not the input); credentials are not in the index manifest.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import Field

from ragjudge.errors import EnvironmentFault, RagjudgeError, UsageError
from ragjudge.llm.redact import display_url, redact
from ragjudge.models import Passage
from ragjudge.progress import ProgressBars
from ragjudge.retrieval.base import Retriever, StaleIndex, index_text
from ragjudge.retrieval.dense import EncoderOptions, build_encoder, encoder_identity

URL_VARIABLE = "RAGJUDGE_ES_URL"
MANIFEST = "elasticsearch.json"


class ElasticsearchError(RagjudgeError):
    """The cluster is unreachable, refused a request, or rejected documents."""


class ElasticsearchUnreachable(ElasticsearchError, EnvironmentFault):
    """The cluster cannot be reached at all (refused, DNS, no route, timed out): the network, not the input, so
    the CLI exits 3 as for any EnvironmentFault."""


class ElasticsearchOptions(EncoderOptions):
    mode: Literal["bm25", "elser", "knn"] = "bm25"
    url: str | None = None
    """Cluster URL; default $RAGJUDGE_ES_URL (one of the two is required)."""
    index: str | None = None
    """Index name; default `ragjudge-<mode>-<corpus and settings hash>`, so each corpus gets its own."""
    fields: list[str] = Field(default_factory=lambda: ["title", "text"])
    """Fields a BM25 query matches (multi_match, best_fields)."""
    analyzer: str = "standard"
    k1: float = 1.2
    b: float = 0.75
    elser_model: str = ".elser_model_2"
    """ELSER trained model (deployment) id, or an inference endpoint id."""
    elser_query: Literal["sparse_vector", "text_expansion"] = "sparse_vector"
    pipeline: str | None = None
    """Ingest pipeline id; default `ragjudge-elser-<model>`."""
    num_candidates: int = 100
    """kNN candidates per shard (at least k)."""
    number_of_shards: int = 1
    number_of_replicas: int = 0
    chunk_size: int = 200
    """Documents per bulk request (ELSER runs inference per document: keep it modest)."""
    bulk_retries: int = 5
    bulk_backoff: float = 2.0
    """Seconds before the first resend of documents rejected with 429 (doubling, at most 60)."""
    msearch_batch: int = 64
    request_timeout: float = 120.0
    es_api_key_env: str | None = "RAGJUDGE_ES_API_KEY"
    """Environment variable holding an Elasticsearch API key (api_key_env is the embeddings API's)."""
    verify_certs: bool = True
    ca_certs: str | None = None
    embed_batch: int = 512
    """kNN: passages embedded per step while streaming them to the cluster."""


class ElasticsearchRetriever(Retriever):
    kind = "elasticsearch"
    Options = ElasticsearchOptions
    options: ElasticsearchOptions

    def __init__(self, options: dict[str, Any] | None = None, *, source: str | None = None,
                 client: Any = None):
        super().__init__(options, source=source)
        self.url = self.options.url or os.environ.get(URL_VARIABLE) or ""
        if not self.url and client is None:
            name = f"pipeline {Path(source).stem}" if source else "the elasticsearch retriever"
            raise UsageError(f"{name} searches an Elasticsearch cluster: set {URL_VARIABLE} to its URL "
                             "(http(s)://host:port; the es_bm25, es_knn and elser pipelines read it), or give the "
                             "retriever a url option")
        parts = urlsplit(self.url)
        if self.url and (parts.scheme not in ("http", "https") or not parts.hostname):
            raise UsageError(f"Elasticsearch URL must be http(s)://host[:port], got {display_url(self.url)!r}")
        self._client = client
        self.encoder = build_encoder(self.options) if self.options.mode == "knn" else None
        self.index_key: str | None = None
        """Set by the pipeline to the corpus+settings hash; names the index when `index` is not given."""
        self.index_name: str | None = self.options.index
        self.count = 0

    # -- identity --------------------------------------------------------------------------------
    def identity(self) -> dict[str, Any]:
        o = self.options
        keep: dict[str, Any] = {"mode": o.mode, "analyzer": o.analyzer, "k1": o.k1, "b": o.b, "index": o.index}
        if o.mode == "elser":
            keep["elser_model"] = o.elser_model
        if o.mode == "knn":
            keep.update(encoder_identity(o))
        return {"retriever": self.kind, "options": keep}

    def describe(self) -> dict[str, Any]:
        elser = {"elser_query": self.options.elser_query} if self.options.mode == "elser" else {}
        return {**self.identity(), "url": display_url(self.url), "index": self.index_name,
                "fields": self.options.fields, **elser}

    @property
    def pipeline_id(self) -> str:
        return self.options.pipeline or f"ragjudge-elser-{self.options.elser_model.strip('.').replace('/', '-')}"

    # -- request bodies (pure: tests check exactly what is sent) -----------------------------------
    def settings(self) -> dict[str, Any]:
        o = self.options
        return {"number_of_shards": o.number_of_shards, "number_of_replicas": o.number_of_replicas,
                "refresh_interval": "-1", "similarity": {"default": {"type": "BM25", "k1": o.k1, "b": o.b}}}

    def mappings(self, dims: int | None = None) -> dict[str, Any]:
        o = self.options
        text = {"type": "text", "analyzer": o.analyzer}
        properties: dict[str, Any] = {"passage_id": {"type": "keyword"}, "title": text, "text": dict(text)}
        if o.mode == "elser":
            properties["ml"] = {"properties": {"tokens": {"type": "sparse_vector"}}}
        if o.mode == "knn":
            if not dims:
                raise UsageError("knn mapping needs the embedding dimension")
            properties["embedding"] = {"type": "dense_vector", "dims": dims, "index": True, "similarity": "cosine"}
        return {"dynamic": False, "properties": properties}

    def ingest_pipeline(self) -> dict[str, Any]:
        """ELSER: expand `text` into weighted tokens at indexing time; a failure rejects the document."""
        return {"description": f"ragjudge: ELSER ({self.options.elser_model}) tokens of the passage text",
                "processors": [{"inference": {"model_id": self.options.elser_model,
                                              "input_output": [{"input_field": "text", "output_field": "ml.tokens"}]}}]}

    def query_body(self, query: str, k: int, vector: Sequence[float] | None = None) -> dict[str, Any]:
        o = self.options
        body: dict[str, Any] = {"size": k, "_source": ["passage_id", "title", "text"]}
        if o.mode == "bm25":
            body["query"] = {"multi_match": {"query": query, "fields": o.fields, "type": "best_fields"}}
        elif o.mode == "elser":
            if o.elser_query == "sparse_vector":
                body["query"] = {"sparse_vector": {"field": "ml.tokens", "inference_id": o.elser_model,
                                                   "query": query}}
            else:
                body["query"] = {"text_expansion": {"ml.tokens": {"model_id": o.elser_model, "model_text": query}}}
        else:
            if vector is None:
                raise UsageError("a knn query needs the query vector")
            body["knn"] = {"field": "embedding", "query_vector": [float(x) for x in vector], "k": k,
                           "num_candidates": max(o.num_candidates, k)}
        return body

    # -- connection ------------------------------------------------------------------------------
    def client(self) -> Any:
        if self._client is None:
            from elasticsearch import Elasticsearch

            parts = urlsplit(self.url)
            auth: dict[str, Any] = {}
            api_key = os.environ.get(self.options.es_api_key_env) if self.options.es_api_key_env else None
            if api_key:
                auth["api_key"] = api_key
            elif parts.username or os.environ.get("RAGJUDGE_ES_USERNAME"):
                auth["basic_auth"] = (parts.username or os.environ["RAGJUDGE_ES_USERNAME"],
                                      parts.password or os.environ.get("RAGJUDGE_ES_PASSWORD", ""))
            tls: dict[str, Any] = {}
            if parts.scheme == "https":
                tls = {"verify_certs": self.options.verify_certs}
                if self.options.ca_certs:
                    tls["ca_certs"] = self.options.ca_certs
            self._client = Elasticsearch(display_url(self.url), request_timeout=self.options.request_timeout,
                                         max_retries=2, retry_on_timeout=True, **auth, **tls)
        return self._client

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Connection and API failures become one line naming the URL without credentials."""
        from elastic_transport import ConnectionError as TransportConnectionError
        from elastic_transport import ConnectionTimeout
        from elasticsearch import ApiError

        try:
            yield
        except (TransportConnectionError, ConnectionTimeout) as exc:
            reason = str(getattr(exc, "message", "") or exc).splitlines()[0][:200]
            raise ElasticsearchUnreachable(redact(f"cannot reach Elasticsearch at {display_url(self.url)} ({what}): "
                                                  f"{reason}")) from None
        except ApiError as exc:
            raise ElasticsearchError(redact(f"Elasticsearch at {display_url(self.url)} refused {what}: "
                                            f"HTTP {exc.meta.status} {_error_reason(exc.body)}")) from None

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        with self._errors(what):
            return fn(*args, **kwargs)

    # -- indexing --------------------------------------------------------------------------------
    def _actions(self, passages: Sequence[Passage], index: str) -> Iterator[dict[str, Any]]:
        step = self.options.embed_batch if self.encoder else max(len(passages), 1)
        for start in range(0, len(passages), step):
            batch = passages[start : start + step]
            vectors = None if self.encoder is None else self.encoder.encode(
                [self.options.passage_prefix + index_text(p) for p in batch])
            for i, p in enumerate(batch):
                source: dict[str, Any] = {"passage_id": p.document_id, "title": p.title or "", "text": p.text}
                if vectors is not None:
                    source["embedding"] = vectors[i].tolist()
                yield {"_op_type": "index", "_index": index, "_id": p.document_id, "_source": source}

    def index(self, passages: Sequence[Passage], bars: ProgressBars | None = None) -> None:
        from elasticsearch import helpers

        client = self.client()
        name = self.index_name or f"ragjudge-{self.options.mode}-{self.index_key or uuid.uuid4().hex[:12]}"
        self._call("info", client.info)
        if self.options.mode == "elser":
            self._call("ingest pipeline setup", client.ingest.put_pipeline, id=self.pipeline_id,
                       **self.ingest_pipeline())
        if self._call("index lookup", client.indices.exists, index=name):
            self._call("index delete", client.indices.delete, index=name)
        dims = None
        if self.encoder is not None:  # the mapping needs the vector size: embed one passage to learn it
            dims = int(self.encoder.encode([index_text(passages[0])]).shape[1])
        self._call("index creation", client.indices.create, index=name, settings=self.settings(),
                   mappings=self.mappings(dims))
        advance = bars.bar("elasticsearch bulk", total=len(passages)) if bars else None
        extra = {"pipeline": self.pipeline_id} if self.options.mode == "elser" else {}
        failures: list[dict[str, Any]] = []
        ok_count = 0
        stream = helpers.streaming_bulk(client, self._actions(passages, name), chunk_size=self.options.chunk_size,
                                        max_retries=self.options.bulk_retries,
                                        initial_backoff=self.options.bulk_backoff, max_backoff=60,
                                        raise_on_error=False, yield_ok=True, **extra)
        with self._errors("bulk indexing"):
            for ok, item in stream:
                if ok:
                    ok_count += 1
                else:
                    failures.append(item)
                if advance:
                    advance(1)
        if failures:
            first = next(iter(failures[0].values()), {})
            raise ElasticsearchError(f"Elasticsearch at {display_url(self.url)} rejected {len(failures)} of "
                                     f"{len(passages)} passages; first: id {first.get('_id')!r}: "
                                     f"{_error_reason(first)}")
        self._call("settings update", client.indices.put_settings, index=name,
                   settings={"index": {"refresh_interval": "1s"}})
        self._call("refresh", client.indices.refresh, index=name)
        self.index_name, self.count = name, ok_count

    def save(self, folder: Path) -> None:
        manifest = {"url": display_url(self.url), "index": self.index_name, "count": self.count,
                    "identity": self.identity()}
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")

    def load(self, folder: Path) -> None:
        path = folder / MANIFEST
        if not path.exists():
            raise StaleIndex(f"{path} is missing")
        manifest = json.loads(path.read_text())
        if manifest.get("url") != display_url(self.url):
            raise StaleIndex(f"index was built on {manifest.get('url')}, not {display_url(self.url)}")
        name = manifest["index"]
        client = self.client()
        if not self._call("index lookup", client.indices.exists, index=name):
            raise StaleIndex(f"index {name} no longer exists")
        count = int(self._call("count", client.count, index=name)["count"])
        if count != manifest.get("count"):
            raise StaleIndex(f"index {name} has {count} documents, expected {manifest.get('count')}")
        self.index_name, self.count = name, count

    def attach(self) -> None:
        """Search an index built elsewhere (options.index), without a corpus."""
        if not self.options.index:
            raise UsageError("without --corpus, the elasticsearch retriever needs options.index (an existing index)")
        client = self.client()
        if not self._call("index lookup", client.indices.exists, index=self.options.index):
            raise UsageError(f"Elasticsearch index {self.options.index!r} does not exist at {display_url(self.url)}")
        self.index_name = self.options.index

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    # -- search ----------------------------------------------------------------------------------
    def _search_many(self, queries: list[str], k: int) -> list[list[Passage]]:
        if self.index_name is None:
            raise UsageError("the elasticsearch retriever has no index: index, load or attach first")
        vectors = None if self.encoder is None else self.encoder.encode(
            [self.options.query_prefix + q for q in queries])
        client = self.client()
        results: list[list[Passage]] = []
        batch = self.options.msearch_batch
        for start in range(0, len(queries), batch):
            searches = [part for i in range(start, min(start + batch, len(queries))) for part in (
                {"index": self.index_name}, self.query_body(queries[i], k, None if vectors is None else vectors[i]))]
            response = self._call("search", client.msearch, searches=searches)
            for offset, item in enumerate(response["responses"]):
                if "error" in item:
                    raise ElasticsearchError(f"Elasticsearch at {display_url(self.url)} failed query "
                                             f"{start + offset + 1}: {_error_reason(item)}")
                results.append([_hit(h) for h in item["hits"]["hits"]])
        return results


def _hit(hit: dict[str, Any]) -> Passage:
    source = hit.get("_source") or {}
    return Passage(id=str(source.get("passage_id", hit.get("_id"))), text=source.get("text", ""),
                   title=source.get("title") or None, score=float(hit.get("_score") or 0.0))


def _error_reason(body: Any) -> str:
    """The root cause an Elasticsearch error body carries, on one line."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            causes = error.get("root_cause") or []
            cause = causes[0] if causes and isinstance(causes[0], dict) else error
            kind, reason = cause.get("type", ""), cause.get("reason", "")
            return f"{kind}: {reason}".strip(": ")[:300] or json.dumps(error)[:300]
        return str(error)[:300]
    return str(body)[:300]
