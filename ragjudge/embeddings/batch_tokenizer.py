"""Texts to padded token arrays with the `tokenizers` library's Rust batch encoder, many texts per call.

transformers' tokenizer call wraps the same encoder in per-text Python (building lists, flattening, converting
to tensors); on a fast GPU that wrapper, not the model, set the pace (issue 44: 4,793 passages/s against the
model's 17,458). Here one `encode_batch` call tokenizes a whole chunk on every core, and each encoding's ids go
straight into a padded numpy array.
The token ids are the ones sentence-transformers feeds its model (stripped text, special tokens, truncated to the
limit, longest first), so the vectors do not change.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import suppress
from functools import cached_property
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.embeddings.model_files import library_versions
from ragjudge.embeddings.quiet_loading import quiet_model_loading
from ragjudge.errors import RagjudgeError
from ragjudge.formats.files import atomic_output


CUT_CHARS_PER_TOKEN = 8
"""A text longer than this many characters per kept token is cut at the first space past that point before it is
tokenized (`BatchTokenizer.encodings`): English runs about 4.5 characters a token, so the cut keeps every token
truncation keeps, and the encoder no longer tokenizes a long document whole to keep its first 256 tokens (10 KB
documents: 5.2x the texts a second on 2 cores, with identical ids)."""


class BatchTokenizer:
    """A fast tokenizer's own Rust `Tokenizer` (from its JSON form), set to truncate at `max_length` and not to pad."""

    def __init__(self, tokenizer_json: str, max_length: int, pad_id: int):
        from tokenizers import Tokenizer

        self.tokenizer_json = tokenizer_json
        self.tokenizer = Tokenizer.from_str(tokenizer_json)
        self.tokenizer.enable_truncation(max_length, strategy="longest_first")
        self.tokenizer.no_padding()
        self.max_length = max_length
        self.pad_id = pad_id
        config = json.loads(tokenizer_json)
        self.cut_at = CUT_CHARS_PER_TOKEN * max_length if cuts_at_spaces(config) else None
        """Characters past which a text is cut at a space before tokenizing; None where a cut could change the ids."""
        self.ascii_normal = AsciiNormal.of(config)
        """BERT's normalizer done in Python for ASCII texts (`AsciiNormal`); None where the tokenizer has another."""

    @classmethod
    def from_pretrained(cls, folder: str | Path, max_length: int, saved: Path | None = None) -> BatchTokenizer | None:
        """The folder's fast tokenizer as transformers loads it (its added tokens and special-token settings
        applied); None when the model has no fast tokenizer (the caller keeps transformers' path).

        `saved`: a file that keeps it as loaded (`saved_tokenizer`), read instead of loading transformers, which
        costs a process about 2 s of CPU where nothing else needs it (ONNX Runtime runs the model); written after
        a load, and left alone if it cannot be (the next process loads again)."""
        if saved is not None:
            try:
                kept = json.loads(saved.read_text(encoding="utf-8"))
                return cls(kept["tokenizer"], max_length, int(kept["pad_id"]))
            except Exception:  # absent, unreadable or not this library's (`tokenizers` raises plain Exceptions)
                pass
        with quiet_model_loading():  # imported under the loading lock too: transformers' lazy module is not
            from transformers import AutoTokenizer  # safe to import from two threads at once

            loaded = AutoTokenizer.from_pretrained(str(folder))
        backend = getattr(loaded, "backend_tokenizer", None)
        if backend is None or not getattr(loaded, "is_fast", False):
            return None
        pad = loaded.pad_token_id
        made = cls(backend.to_str(), max_length, int(pad) if pad is not None else 0)
        if saved is not None:
            with suppress(RagjudgeError), atomic_output(saved) as partial:  # a full disk costs the next process a load
                partial.write_text(json.dumps({"pad_id": made.pad_id, "tokenizer": made.tokenizer_json}),
                                   encoding="utf-8")
        return made

    @cached_property
    def _untruncated(self) -> Any:
        return self._variant(truncate=False, normalize=True)

    @cached_property
    def _unnormalized(self) -> Any:
        """The tokenizer without its normalizer, for texts normalized beforehand (`AsciiNormal`)."""
        return self._variant(truncate=True, normalize=False)

    @cached_property
    def _untruncated_unnormalized(self) -> Any:
        return self._variant(truncate=False, normalize=False)

    def _variant(self, *, truncate: bool, normalize: bool) -> Any:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_str(self.tokenizer_json)
        if truncate:
            tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        else:
            tokenizer.no_truncation()
        tokenizer.no_padding()
        if not normalize:
            tokenizer.normalizer = None
        return tokenizer

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Each text's length in tokens as given (not stripped), special tokens included, before truncation: what
        transformers' tokenizer call counts (truncation reports)."""
        return [len(encoding) for encoding in self.normalized_encodings(texts, truncate=False)]

    def encode_batch(self, texts: Sequence[Any], tokenizer: Any = None) -> list[Any]:
        """The library's encodings of `texts` as given (`encode_batch_fast` where the library has it: the same ids,
        without the character offsets nothing here reads), by this tokenizer or by `tokenizer`."""
        tokenizer = self.tokenizer if tokenizer is None else tokenizer
        encode = getattr(tokenizer, "encode_batch_fast", None) or tokenizer.encode_batch
        return encode(list(texts))

    def encodings(self, texts: Sequence[str]) -> list[Any]:
        """Each text's encoding (stripped, as sentence-transformers strips it), special tokens included, truncated:
        one call for the lot, which the library runs on every core without holding the GIL. A text longer than
        `cut_at` is tokenized up to the first space past it, where its tokens before the cut are the whole text's;
        one whose part made fewer tokens than truncation keeps (a very long word: few tokens for its characters) is
        tokenized again whole, so the ids are the whole text's either way."""
        stripped = [str(t).strip() for t in texts]
        cut_at = self.cut_at
        if cut_at is None or not (long := [i for i, text in enumerate(stripped) if len(text) > cut_at]):
            return self.normalized_encodings(stripped)
        given = list(stripped)
        for i in long:
            given[i] = space_cut(stripped[i], cut_at)
        encodings = self.normalized_encodings(given)
        short = [i for i in long if given[i] is not stripped[i] and len(encodings[i]) < self.max_length]
        for i, encoding in zip(short, self.normalized_encodings([stripped[i] for i in short]) if short else (),
                               strict=True):
            encodings[i] = encoding
        return encodings

    def normalized_encodings(self, texts: Sequence[str], truncate: bool = True) -> list[Any]:
        """`encode_batch` of `texts` (`truncate`: at `max_length`, else whole), the ASCII ones normalized here
        (`AsciiNormal`) and tokenized without the library's normalizer: the same ids for a third less of the
        encoder's CPU."""
        whole, unnormalized = ((self.tokenizer, self._unnormalized) if truncate
                               else (self._untruncated, self._untruncated_unnormalized))
        normal = self.ascii_normal
        done = [normal(text) for text in texts] if normal is not None else []
        plain = [i for i, text in enumerate(done) if text is not None]
        if not plain:
            return self.encode_batch(texts, whole)
        if len(plain) == len(texts):
            return self.encode_batch(done, unnormalized)
        other = [i for i, text in enumerate(done) if text is None]
        merged: list[Any] = [None] * len(texts)
        for i, encoding in zip(plain, self.encode_batch([done[i] for i in plain], unnormalized), strict=True):
            merged[i] = encoding
        for i, encoding in zip(other, self.encode_batch([texts[i] for i in other], whole), strict=True):
            merged[i] = encoding
        return merged

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids (`encodings`)."""
        return [e.ids for e in self.encodings(texts)]

    def arrays(self, encodings: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """(token ids, attention mask), int64, padded on the right to the longest of `encodings`."""
        tokens, lengths = self.padded_ids(encodings)
        return tokens, attention_mask(lengths, tokens.shape[1])

    def padded_ids(self, encodings: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        """(token ids, int64, padded on the right to the longest of `encodings`; each one's length): every row's ids
        read into one flat array and written into the padded one through the mask (the ids list `Encoding.ids`
        builds is the one copy through Python; assigning each list to its row cost 0.3 us a text more)."""
        lengths = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
        width = int(lengths.max()) if len(encodings) else 0
        tokens = np.full((len(encodings), width), self.pad_id, dtype=np.int64)
        tokens[np.arange(width) < lengths[:, None]] = np.fromiter(
            chain.from_iterable(map(attrgetter("ids"), encodings)), dtype=np.int64, count=int(lengths.sum()))
        return tokens, lengths


class AsciiNormal:
    """BERT's normalizer (`BertNormalizer`) on an ASCII text, in Python: `__call__` answers the string the library's
    normalizer makes of it, or None where it cannot tell cheaply (a non-ASCII text, a control character other than a
    tab or line break, an added token's text). For ASCII, BERT's steps reduce to whitespace made spaces and
    lowercasing: accents (NFD) and Chinese characters need non-ASCII text, and a control character is removed (the
    text is left to the library). The library's normalizer tracks every character's alignment and took a third of
    the encoder's CPU (ClapNQ on 2 cores: 10,139 ASCII passages a second with it, 15,933 with the text lowered in
    Python), while `str.lower` and `str.replace` take a fraction of a microsecond."""

    def __init__(self, lowercase: bool, clean_text: bool, added: Sequence[str]):
        self.lowercase = lowercase
        self.clean_text = clean_text
        self.added = tuple({token.lower() for token in added if token} | {token for token in added if token})

    @classmethod
    def of(cls, config: dict[str, Any]) -> AsciiNormal | None:
        """The normalizer of a tokenizer (its parsed JSON form) if it is `BertNormalizer` and no added token holds
        whitespace, else None."""
        normalizer = config.get("normalizer") or {}
        if normalizer.get("type") != "BertNormalizer" or an_added_token_holds_whitespace(config):
            return None
        return cls(bool(normalizer.get("lowercase", True)), bool(normalizer.get("clean_text", True)),
                   added_token_texts(config))

    def __call__(self, text: str) -> str | None:
        if not text.isascii():
            return None
        normal = text.lower() if self.lowercase else text
        if self.clean_text:  # what BERT's cleaning maps to a space; any other control character it removes
            normal = normal.replace("\n", " ").replace("\t", " ").replace("\r", " ")
        if not normal.isprintable() or any(token in normal for token in self.added):
            return None
        return normal


def space_cut(text: str, at: int) -> str:
    """`text` up to its first space at or past character `at` (`text` itself, the same object, where there is none)."""
    if len(text) <= at:
        return text
    end = text.find(" ", at)
    return text if end < 0 else text[:end]


def cuts_at_spaces(config: dict[str, Any]) -> bool:
    """Whether a text cut at a space keeps every token before the cut (`BatchTokenizer.encodings`), for a tokenizer
    (its parsed JSON form) with BERT's normalizer (character by character), its pre-tokenizer (words split at
    whitespace and punctuation) and WordPiece (word by word) and no added token containing a space (truncation keeps
    the start: `BatchTokenizer` sets it so). Any other tokenizer is never cut: a byte-level or SentencePiece one, or a
    normalizer over the whole text, may tokenize across the cut."""
    part = lambda name: (config.get(name) or {}).get("type")  # noqa: E731
    return (part("normalizer") in (None, "BertNormalizer") and part("pre_tokenizer") == "BertPreTokenizer"
            and part("model") == "WordPiece" and not an_added_token_holds_whitespace(config))


def added_token_texts(config: dict[str, Any]) -> list[str]:
    """The texts of a tokenizer's added tokens (its parsed JSON form): `[CLS]`, `[MASK]`, ... for BERT."""
    return [token.get("content", "") for token in config.get("added_tokens") or []]


def an_added_token_holds_whitespace(config: dict[str, Any]) -> bool:
    return any(c.isspace() for text in added_token_texts(config) for c in text)


def attention_mask(lengths: np.ndarray, width: int) -> np.ndarray:
    """int64, 1 over each row's first `lengths[i]` tokens of `width`, 0 over its padding."""
    return (np.arange(width) < lengths[:, None]).astype(np.int64)


def saved_tokenizer(folder: Path) -> Path:
    """Where `from_pretrained` keeps a model's tokenizer in a folder of files derived from the model (its ONNX export,
    named by the model's files and the libraries that read them): one file per `tokenizers` version."""
    return folder / f"tokenizer-{library_versions('tokenizers')['tokenizers']}.json"
