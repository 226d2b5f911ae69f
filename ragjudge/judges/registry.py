"""Find judge specs by name across spec folders and build the judges they describe."""

from __future__ import annotations

import importlib
from pathlib import Path

from ragjudge.errors import InputError, UsageError
from ragjudge.judges.base import Judge
from ragjudge.judges.llm_judge import LLMJudge
from ragjudge.judges.spec import JudgeSpec, load_spec
from ragjudge.specs import spec_search_path


class JudgeRegistry:
    """The judge specs found in the built-in and the given folders. With `bench`, only the judges of that bench's
    items (see JudgeSpec.bench) are available: MTRAG refuses a CXMArena judge before any work, and lists its own."""

    def __init__(self, extra_dirs: list[str | Path] | None = None, *, bench: str | None = None):
        self.bench = bench
        self.specs: dict[str, JudgeSpec] = {}
        for folder in reversed(spec_search_path("judges", extra_dirs)):  # later (user) folders override
            if not folder.is_dir():
                if folder in (extra_dirs or []):
                    raise UsageError(f"judge spec folder not found: {folder}")
                continue
            for path in sorted(folder.glob("*.y*ml")):
                spec = load_spec(path)
                if spec.name != path.stem:
                    raise InputError(f"name {spec.name!r} must match the file name {path.stem!r}",
                                     file=str(path), field="name")
                self.specs[spec.name] = spec

    def add(self, spec: JudgeSpec) -> None:
        """A judge made in code rather than read from a folder (a criterion in one line, `ragjudge.criterion`); a
        name a different built-in or folder spec already has is refused, the same spec again is fine."""
        known = self.specs.get(spec.name)
        if known is not None and known != spec:
            raise UsageError(f"judge name {spec.name!r} is taken (a judge spec of that name exists): name the "
                             "criterion otherwise")
        self.specs[spec.name] = spec

    @property
    def names(self) -> list[str]:
        return sorted(n for n, spec in self.specs.items() if spec.bench == self.bench)

    def spec(self, name: str) -> JudgeSpec:
        if name not in self.specs:
            raise UsageError(f"unknown judge {name!r} (available: {', '.join(self.names)})")
        spec = self.specs[name]
        if spec.bench != self.bench:
            owner = f"bench {spec.bench}'s items" if spec.bench else "answers to MTRAG-shaped tasks"
            here = f"bench {self.bench}" if self.bench else "answers to MTRAG-shaped tasks"
            raise UsageError(f"judge {name!r} scores {owner}, not {here} (available: {', '.join(self.names)})")
        return spec

    def build(self, name: str, options: dict[str, object] | None = None) -> Judge:
        """Build a judge; `options` override the spec's options (e.g. bertscore_model from the CLI)."""
        spec = self.spec(name)
        known = {k: v for k, v in (options or {}).items() if k in spec.options and v is not None}
        if known:
            spec = spec.model_copy(update={"options": {**spec.options, **known}})
        if spec.kind == "llm":
            return LLMJudge(spec)
        module_name, _, class_name = (spec.implementation or "").partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError, ValueError, TypeError) as exc:
            raise InputError(f"cannot load {spec.implementation!r}: {exc}", file=spec.source,
                             field="implementation") from None
        try:
            return cls(spec)
        except (ValueError, TypeError, KeyError) as exc:  # a third-party judge refusing its options
            raise InputError(f"{spec.implementation} refuses its options: {exc}", file=spec.source,
                             field="options") from None

    def build_many(self, names: list[str], options: dict[str, object] | None = None) -> list[Judge]:
        for name in names:
            self.spec(name)  # report every unknown name before building anything expensive
        return [self.build(n, options) for n in names]
