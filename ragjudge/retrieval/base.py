"""The one small interface every retriever implements, and the passage store local indexes share. `search_many` is
the workhorse: engines are much faster scoring a batch of queries than one at a time.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from ragjudge.errors import InputError, RagjudgeError, UsageError
from ragjudge.formats.jsonl import read_jsonl, write_jsonl
from ragjudge.models import Passage
from ragjudge.progress import ProgressBars


class StaleIndex(RagjudgeError):
    """A saved index cannot be used (missing files, remote index gone): the caller rebuilds it."""


class RetrieverOptions(BaseModel):
    """Base of each retriever's options; unknown options are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid")


class Retriever(ABC):
    kind: ClassVar[str]
    Options: ClassVar[type[RetrieverOptions]] = RetrieverOptions

    def __init__(self, options: dict[str, Any] | None = None, *, source: str | None = None):
        self.options = self.parse_options(options, source)

    @classmethod
    def parse_options(cls, options: dict[str, Any] | None, source: str | None = None) -> Any:
        """Validate spec options; a mistake names the spec file and the option."""
        try:
            return cls.Options.model_validate(options or {})
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            raise InputError(f"{cls.kind} retriever: {err['msg']}", file=source,
                             field=f"retriever.options.{where}" if where else "retriever.options") from None

    def identity(self) -> dict[str, Any]:
        """What determines the index's content: same identity + same corpus = reusable index."""
        return {"retriever": self.kind, "options": self.options.model_dump(mode="json")}

    def describe(self) -> dict[str, Any]:
        """Recorded with runs and results."""
        return self.identity()

    @abstractmethod
    def index(self, passages: Sequence[Passage], bars: ProgressBars | None = None) -> None:
        """Build the index over `passages` (replacing any previous content)."""

    @abstractmethod
    def save(self, folder: Path) -> None:
        """Persist the index into an empty `folder`."""

    @abstractmethod
    def load(self, folder: Path) -> None:
        """Load what `save` wrote; raise StaleIndex when it cannot be used."""

    def close(self) -> None:
        """Release connections or memory maps."""

    @abstractmethod
    def _search_many(self, queries: list[str], k: int) -> list[list[Passage]]:
        """Top-k passages per query, best first, each with `score` set."""

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Passage]]:
        if k < 1:
            raise UsageError(f"k must be at least 1, got {k}")
        for i, query in enumerate(queries):
            if not isinstance(query, str) or not query.strip():
                raise UsageError(f"query {i + 1} of {len(queries)} is empty")
        if not queries:
            return []
        return self._search_many(list(queries), k)

    def search(self, query: str, k: int = 10) -> list[Passage]:
        return self.search_many([query], k)[0]


def index_text(passage: Passage, with_title: bool = True) -> str:
    """Title and text, as BEIR retrievers index them; MTRAG passages already start with their title."""
    if with_title and passage.title and not passage.text.startswith(passage.title):
        return f"{passage.title}\n{passage.text}"
    return passage.text


class PassageStore:
    """The indexed passages in index order, so that a hit (a row number) becomes a Passage again."""

    FILE = "passages.jsonl"

    def __init__(self, passages: Sequence[Passage] = ()):
        self.passages = list(passages)

    def __len__(self) -> int:
        return len(self.passages)

    def hit(self, row: int, score: float) -> Passage:
        return self.passages[row].model_copy(update={"score": float(score)})

    def save(self, folder: Path) -> None:
        write_jsonl(folder / self.FILE, (p.to_record() for p in self.passages))

    @classmethod
    def load(cls, folder: Path) -> PassageStore:
        path = folder / cls.FILE
        if not path.exists():
            raise StaleIndex(f"{path} is missing")
        return cls([Passage.of_record(record) for _, record in read_jsonl(path)])
