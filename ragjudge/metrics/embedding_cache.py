"""A persistent store of token embeddings, so a text is encoded once across runs.

Comparing generators on MTRAG scores every system against the same references and passages; with this cache
the second system only pays for its own answers. Layout: `<root>/<model slug>-<key hash>/<2 hex>/<sha256>.emb`,
one file per text, written to a temporary name and renamed, so a crash leaves either the whole entry or none.
Entries carry a CRC32 and are checked on read: anything unreadable is a miss and is recomputed. Float32, exact.
Everything that changes the vectors is in the key (model files, layer, tokenizer, library versions, device);
`key.json` in each folder says what. A folder that cannot be written turns the cache off with one warning.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import tempfile
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.errors import RagjudgeWarning
from ragjudge.metrics.token_encoder import TokenEmbeddings

FORMAT = 1
_MAGIC = b"RJTEMB\x00\x01"
_HEADER = struct.Struct("<8sIII")  # magic, tokens, dim, crc32 of the payload


class EmbeddingCacheWarning(RagjudgeWarning):
    """The embedding cache is unusable; scoring goes on without it."""


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def model_files(model_type: str) -> Path | None:
    """The local folder holding the model: the path itself, or its snapshot in the Hugging Face cache."""
    if os.path.isdir(model_type):
        return Path(model_type).resolve()
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model_type, "config.json")
    except Exception:  # no hub library or an unreadable cache
        return None
    return Path(found).parent if isinstance(found, str) else None


def space_key(model_type: str, num_layers: int, *, max_length: int, tokenizer: str,
              device: str) -> dict[str, Any] | None:
    """What the vectors depend on, or None when the model has no local files to identify it by."""
    import bert_score
    import torch
    import transformers

    folder = model_files(model_type)
    if folder is None:
        return None
    files = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file())
    return {"format": FORMAT, "model": model_type, "folder": str(folder), "files": files, "num_layers": num_layers,
            "tokenizer": tokenizer, "use_fast_tokenizer": False, "max_length": max_length, "dtype": "float32",
            "device": device.split(":")[0], "torch": torch.__version__, "transformers": transformers.__version__,
            "bert_score": bert_score.__version__}


def encode_entry(emb: TokenEmbeddings) -> bytes:
    ids = np.ascontiguousarray(emb.ids, dtype="<i4").tobytes()
    vectors = np.ascontiguousarray(emb.vectors, dtype="<f4").tobytes()
    n, dim = emb.vectors.shape
    crc = zlib.crc32(vectors, zlib.crc32(ids))
    return _HEADER.pack(_MAGIC, n, dim, crc) + ids + vectors


def decode_entry(blob: bytes) -> TokenEmbeddings | None:
    """The entry, or None if it is truncated, corrupt or of another format."""
    if len(blob) < _HEADER.size:
        return None
    magic, n, dim, crc = _HEADER.unpack_from(blob)
    ids_end = _HEADER.size + 4 * n
    if magic != _MAGIC or len(blob) != ids_end + 4 * n * dim:
        return None
    ids, vectors = blob[_HEADER.size:ids_end], blob[ids_end:]
    if zlib.crc32(vectors, zlib.crc32(ids)) != crc:
        return None
    return TokenEmbeddings(ids=np.frombuffer(ids, dtype="<i4").astype(np.int32),
                           vectors=np.frombuffer(vectors, dtype="<f4").reshape(n, dim).astype(np.float32))


class EmbeddingCache:
    """Token embeddings on disk for one embedding space (model, layer, tokenizer...)."""

    def __init__(self, root: Path, key: dict[str, Any]):
        blob = json.dumps(key, sort_keys=True)
        slug = re.sub(r"[^A-Za-z0-9._-]+", "_", "_".join(Path(str(key["model"])).parts[-2:]))[-60:]
        self.folder = Path(root) / f"{slug}-L{key['num_layers']}-{hashlib.sha256(blob.encode()).hexdigest()[:16]}"
        self.key = key
        self.writable = True
        self.hits = 0
        self.writes = 0
        self._ready = False

    def _path(self, text: str) -> Path:
        h = text_key(text)
        return self.folder / h[:2] / f"{h}.emb"

    def get(self, text: str) -> TokenEmbeddings | None:
        try:
            entry = decode_entry(self._path(text).read_bytes())
        except OSError:  # absent or unreadable: a miss
            return None
        if entry is not None:
            self.hits += 1
        return entry

    def put(self, text: str, emb: TokenEmbeddings) -> None:
        if not self.writable:
            return
        path = self._path(text)
        try:
            if not self._ready:
                self.folder.mkdir(parents=True, exist_ok=True)
                if not (self.folder / "key.json").exists():
                    _write_atomic(self.folder / "key.json", json.dumps(self.key, indent=1).encode())
                self._ready = True
            path.parent.mkdir(exist_ok=True)
            _write_atomic(path, encode_entry(emb))
            self.writes += 1
        except OSError as exc:
            self.disable(f"cannot write to {self.folder} ({exc.strerror or exc})")

    def disable(self, why: str) -> None:
        """Stop writing (reads still work where they can); say so once."""
        if self.writable:
            self.writable = False
            warnings.warn(f"embedding cache off: {why}; RB_alg goes on without it (texts are encoded every run)",
                          EmbeddingCacheWarning, stacklevel=3)


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
