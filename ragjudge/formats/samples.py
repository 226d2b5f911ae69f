"""The sample log (`samples.jsonl`, schema `ragjudge.sample/1`): one typed record per sample, for every bench.
What Inspect AI's `EvalSample` is to its viewer: everything that reads a run's samples reads these, so none of them
guesses a bench's record shape; the fields are described in docs/extending.md. Beyond it: `target` may be a gold
label, `target_contexts` carry a relevant document's grade in `score`, and `contexts` are in rank order (for a
retrieval bench, the ranking itself).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.json_schema import SkipJsonSchema

from ragjudge.errors import InputError
from ragjudge.formats.jsonl import json_path, json_type, read_jsonl, to_jsonable, write_jsonl
from ragjudge.formats.run_layout import SAMPLE_LOG, OutputPaths
from ragjudge.models import Passage

SCHEMA_ID = "ragjudge.sample/1"
FILE_NAME = SAMPLE_LOG


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Message(_Model):
    """One turn of a conversation."""

    role: str
    """`user` or `assistant` (MTRAG's `agent` is written `assistant`), or a speaker's name in a multi-party
    dialogue."""
    content: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    """What the source kept with the turn (MTRAG-UN: its author and time)."""


# Also what every judge returns (`Judge.result`): one model from the judge to the sample log. This docstring is the
# published schema's description (docs/sample.schema.json).
class Score(_Model):
    """One metric's or judge's value for one sample. `value` is None when it failed (`error` says why) or when the
    score is a label only."""

    value: float | None = None
    label: str | None = None
    """A categorical verdict (the IDK judge's `yes`, a predicted class)."""
    error: str | None = None
    judge: str | None = None
    """The judge that gave it, when it is not the score's own name (`rb_llm` gives `RB_llm`)."""
    model: str | None = None
    rationale: str | None = None
    raw: str | None = None
    """The judge's answer as received: kept with an error, so an unparsable answer is never a number."""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency: float | None = None
    members: list[Score] = Field(default_factory=list)
    """A panel's members (RB_llm's judges); `value` is their aggregate."""
    details: dict[str, Any] = Field(default_factory=dict)
    metric: SkipJsonSchema[str | None] = Field(None, exclude=True)
    """The metric a judge's verdict is for. The sample log files a score under its metric's name, so it is not
    written there; the journal and MTRAG's results lines keep it (`record`)."""

    @field_validator("value")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number (a failed score keeps its error and no value)")
        return value

    @property
    def failed(self) -> bool:
        return bool(self.error)

    @property
    def ok(self) -> bool:
        """A value and no error."""
        return self.error is None and self.value is not None

    def filed(self) -> Score:
        """This score as the sample log keeps it: filed under its metric's name, so without `metric` (nor its
        members'): a sample built in memory equals the one read back."""
        return self.model_copy(update={"metric": None, "members": [m.filed() for m in self.members]})

    def record(self) -> dict[str, Any]:
        """A judge's verdict as the journal, MTRAG's results lines and the pytest report write it: `judge` and
        `metric` first, unset fields and an empty panel left out, `details` always (the shape these files had before
        judges returned Scores, kept so that old runs resume and their files compare byte for byte)."""
        dumped = self.model_dump(exclude_none=True, exclude={"members"})
        found = {**dumped, "metric": self.metric, "members": [m.record() for m in self.members] or None}
        return {k: found[k] for k in RECORD_ORDER if found.get(k) is not None}

    @classmethod
    def of(cls, record: Mapping[str, Any]) -> Score:
        """A scorer's JSON record (`{"value": ..., "error": ...}`, a judge's `record()`) as a Score: the known
        fields by name, booleans as 0/1, anything else into `details`."""
        known = set(cls.model_fields) - {"members", "details", "value", "metric"}
        data: dict[str, Any] = {k: record[k] for k in known if record.get(k) is not None}
        for key in ("label", "rationale", "raw", "error", "judge", "model"):
            if key in data and not isinstance(data[key], str):
                data[key] = str(data[key])
        value = record.get("value")
        if isinstance(value, (int, float)) and math.isfinite(value):  # true/false as 1/0
            data["value"] = float(value)
        elif isinstance(value, str) and "label" not in data:
            data["label"] = value
        members = record.get("members")
        if isinstance(members, list):
            data["members"] = [cls.of(m) for m in members if isinstance(m, Mapping)]
        details = dict(record.get("details") or {}) if isinstance(record.get("details"), Mapping) else {}
        details.update({k: v for k, v in record.items()
                        if k not in cls.model_fields and v is not None})
        if isinstance(value, (list, dict)):
            details["value"] = value
        data["details"] = to_jsonable(details)
        return cls.model_validate(data)


RECORD_ORDER = ("judge", "metric", "value", "label", "rationale", "raw", "error", "model", "prompt_tokens",
                "completion_tokens", "latency", "members", "details")


class Sample(_Model):
    """One sample of a run, as every reader of runs sees it."""

    schema_: Literal["ragjudge.sample/1"] = Field(SCHEMA_ID, alias="schema")
    id: str
    input: str | list[Message]
    target: str | list[str] | None = None
    target_contexts: list[Passage] = Field(default_factory=list)
    output: str | None = None
    contexts: list[Passage] = Field(default_factory=list)
    scores: dict[str, Score] = Field(default_factory=dict)
    labels: dict[str, str | list[str]] = Field(default_factory=dict)
    error: str | None = None
    """The system's failure on this sample (no output to score)."""
    metadata: dict[str, Any] = Field(default_factory=dict)

    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)

    @property
    def question(self) -> str:
        """The question asked: `input` itself, or the conversation's last user message."""
        if isinstance(self.input, str):
            return self.input
        return next((m.content for m in reversed(self.input) if m.role == "user"),
                    self.input[-1].content if self.input else "")

    @property
    def reference(self) -> str | None:
        """The (first) reference answer."""
        if isinstance(self.target, list):
            return self.target[0] if self.target else None
        return self.target

    def values(self) -> dict[str, float]:
        """Every score that has a number, by name."""
        return {name: s.value for name, s in self.scores.items() if s.value is not None}

    def errors(self) -> dict[str, str]:
        """What failed on this sample: the system (`solve`), then each score."""
        found = {"solve": self.error} if self.error else {}
        found.update({name: s.error for name, s in self.scores.items() if s.error})
        return found

    def to_dict(self) -> dict[str, Any]:
        """The line written to samples.jsonl, as a dict (empty and unset fields left out, `schema` first)."""
        return {"schema": SCHEMA_ID, **self.model_dump(mode="json", exclude_defaults=True, exclude={"schema_"})}

    def to_json(self) -> str:
        """The line written to samples.jsonl, as text (`to_dict` gives the dict)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


def messages(turns: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Conversation turns in any of the shapes ragjudge reads (`{speaker, text}` as MTRAG, `{role, content}` as
    OpenAI) as Messages; MTRAG's `agent` becomes `assistant`, a turn's other fields its metadata."""
    out = []
    for turn in turns:
        role = str(turn.get("role", turn.get("speaker", "")))
        extra = {k: v for k, v in turn.items() if k not in ("role", "speaker", "content", "text")}
        out.append(Message(role="assistant" if role == "agent" else role,
                           content=str(turn.get("content", turn.get("text", ""))),
                           metadata=to_jsonable(extra.get("metadata", extra) if list(extra) == ["metadata"]
                                                else extra)))
    return out


def mtrag_turns(sample_input: str | list[Message]) -> list[dict[str, Any]]:
    """A sample's conversation in MTRAG's shape (`{speaker, text}`, `assistant` written `agent`, a turn's metadata
    as MTRAG-UN keeps it): what MTRAG's own tools and submissions read."""
    if isinstance(sample_input, str):
        return [{"speaker": "user", "text": sample_input}]
    return [{"speaker": "agent" if m.role == "assistant" else m.role, "text": m.content,
             **({"metadata": m.metadata} if m.metadata else {})} for m in sample_input]


def write_samples(path: Path, samples: Iterable[Sample]) -> None:
    write_jsonl(path, (s.to_dict() for s in samples))


def iter_samples(path: Path) -> Iterator[tuple[int, Sample]]:
    """(line, Sample) for each line; a line that is not a `ragjudge.sample/1` record is an InputError naming the file,
    the line and the field."""
    for line, record in read_jsonl(path):
        schema = record.get("schema")
        if schema != SCHEMA_ID:
            what = "no 'schema'" if schema is None else f"schema {schema!r}"
            raise InputError(f"not a {SCHEMA_ID} record ({what}); this ragjudge reads {SCHEMA_ID}", file=str(path),
                             line=line, field="schema")
        try:
            yield line, Sample.model_validate(record)
        except ValidationError as exc:
            raise _input_error(exc, path, line) from None


def read_samples(path: Path) -> list[Sample]:
    samples = [s for _, s in iter_samples(path)]
    if not samples:
        raise InputError("no samples in this file", file=str(path))
    return samples


def _input_error(exc: ValidationError, path: Path, line: int) -> InputError:
    err = exc.errors()[0]
    where = json_path(p for p in err["loc"] if p not in ("str", "list[Message]", "list[str]",
                                                          "function-after[_finite(), nullable[float]]"))
    return InputError(_message(err), file=str(path), line=line, field=where or None)


EXPECTED = {"float": "a number", "int": "a whole number", "string": "text", "bool": "true or false",
            "dict": "an object", "model": "an object", "list": "a list", "literal": "ragjudge.sample/1"}


def _message(err: Any) -> str:
    kind = str(err.get("type", ""))
    if kind == "missing":
        return "is missing"
    if kind == "extra_forbidden":
        return "is not a field of a sample record"
    for prefix, expected in EXPECTED.items():
        if kind.startswith(prefix) and (kind.endswith("_type") or kind.endswith("_parsing") or kind.endswith("_error")):
            return f"must be {expected}, got {json_type(err.get('input'))}"
    return str(err["msg"]).removeprefix("Value error, ")


def samples_file(results: Path) -> Path:
    """Where the samples of the run whose results file is `results` are: `samples.jsonl` in a run folder, or
    `<stem>.samples.jsonl` beside `ragjudge judge`'s results file (`formats.run_layout`)."""
    return OutputPaths.of(results).samples


def names_run(path: Path) -> bool:
    """Whether RUN is only a name: what `--out` was given (`judge rows.csv --out run`, or `run.jsonl`) when no file
    of that name was written (a bench without a record format of its own writes none), its siblings the run."""
    return not path.exists() and samples_file(path).is_file()


def locate_run(path: Path) -> tuple[Path, Path, Path]:
    """(sample log, summary, run info) of RUN: a run folder, `ragjudge judge`'s results file or the name given to its
    --out (`names_run`), or a sample log itself: what every command that reads a run (report, correlate, export,
    retrieval-eval) takes. Only the existence of RUN is checked here; readers say what is missing."""
    if not path.exists() and not names_run(path):
        raise InputError("no such run folder or results file", file=str(path))
    files = OutputPaths.of(path)
    return files.samples, files.summary, files.run


def run_sample_log(path: Path) -> Path:
    """The sample log of RUN (see `locate_run`), or one line saying why there is none."""
    samples, _, _ = locate_run(path)
    if not samples.is_file():
        if path.is_dir() and not OutputPaths.in_folder(path).summary.is_file():
            raise InputError("not a ragjudge run folder (it has no summary.json or samples.jsonl)", file=str(path))
        if path.is_file() and path.suffix != ".jsonl":
            raise InputError("not a ragjudge run (a run folder, `ragjudge judge`'s results file or a samples.jsonl)",
                             file=str(path))
        if path.is_file() and not _judged(path):
            raise InputError(f"not a ragjudge run (no {samples.name} beside it): judge it first, e.g. `ragjudge judge "
                             f"{path.name}`", file=str(path))
        raise InputError(f"no sample log ({samples.name}) beside this run: it was written by an older ragjudge; rerun "
                         "the command that made it with the same --out: it resumes without repeating work and writes "
                         "the sample log", file=str(path))
    return samples


def _judged(path: Path) -> bool:
    """Whether a results file's first line is an older ragjudge's judged record (with `metrics`)."""
    for _, record in read_jsonl(path):
        return "metrics" in record
    return False


def json_schema(model: type[BaseModel] = Sample, schema_id: str = SCHEMA_ID, title: str = "ragjudge sample"
                ) -> dict[str, Any]:
    """The published JSON Schema of a record: a sample's (`ragjudge schema sample`), or `model`'s."""
    return {**model.model_json_schema(by_alias=True), "$id": schema_id, "title": title}


def contexts_of(passages: Sequence[Mapping[str, Any]]) -> list[Passage]:
    """Passage records in the shapes benches keep (`document_id`/`_id`/`id`, `text`, `title`, `score`) as Passages;
    any other field goes to `metadata`."""
    out = []
    for p in passages:
        pid = p.get("document_id", p.get("_id", p.get("id")))
        score = p.get("score")
        extra = {k: v for k, v in p.items() if k not in ("document_id", "_id", "id", "text", "title", "score")}
        out.append(Passage(id=None if pid is None else str(pid),
                           text=p.get("text") if isinstance(p.get("text"), str) else None,
                           title=p.get("title") if isinstance(p.get("title"), str) else None,
                           score=float(score) if isinstance(score, (int, float)) and not isinstance(score, bool)
                           and math.isfinite(score) else None,
                           metadata=to_jsonable(extra)))
    return out
