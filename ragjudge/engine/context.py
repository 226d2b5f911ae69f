"""What a running bench can use: the LLM gateway (one per run, shared by solver and scorers), progress
bars, and the engine's options."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, create_model

from ragjudge.engine.run_settings import SETTINGS
from ragjudge.llm import LLMGateway, ModelRoutes, ResponseCache, UsageTracker
from ragjudge.llm.batch import BatchCollector, run_id_for
from ragjudge.llm.batch_journal import BatchJournal
from ragjudge.llm.gateway import validate_model
from ragjudge.llm.preflight import preflight
from ragjudge.progress import ProgressBars

if TYPE_CHECKING:
    from ragjudge.engine.outputs import OutputPaths

EngineOptions = create_model(  # the run settings' one declaration, validated
    "EngineOptions", __config__=ConfigDict(extra="forbid"), __doc__="Options of the run itself, the same for every "
    "bench (recorded in run.json): the run settings (`run_settings.SETTINGS`), and whether progress bars show.",
    __module__=__name__, **{s.name: (s.type, Field(s.default, ge=s.ge, gt=s.gt, description=s.help)) for s in SETTINGS},
    show_progress=(bool, True))


@dataclass
class RunContext:
    options: EngineOptions
    gateway: LLMGateway | None = None
    bars: ProgressBars = field(default_factory=lambda: ProgressBars(None))
    paths: OutputPaths | None = None
    """Where the run writes (None: nothing is written); benches put extra files at `paths.artifact(name)`."""
    cut_by_limit: bool = False
    """--limit left some of the bench's samples out: figures over the whole data (a paper's) do not describe it."""
    data: Any = None
    """What `Bench.load` returned beside the samples (`Loaded.data`): the run's side data, read by every later hook."""
    facts: dict[str, Any] = field(default_factory=dict)
    """What the solver and scorers learnt about the run as a whole (an index's build time, the passages an encoder
    cut short), handed to `summarize` and `run_info` explicitly rather than kept on the bench between hooks: a bench
    instance holds its options and what they build, never run state (what a run read is `data`, what it learnt
    `facts`), so one instance runs twice alike."""

    def require_gateway(self) -> LLMGateway:
        if self.gateway is None:  # a bench asked for an LLM it did not declare in llm_models()
            raise RuntimeError("this bench calls an LLM but declared no model in llm_models()")
        return self.gateway


def build_gateway(options: EngineOptions, models: list[str], usage_log: Path | None = None,
                  batch_journal: Path | None = None) -> LLMGateway | None:
    """One gateway for the run when any model is named. Every model is checked before any work: a provider
    litellm knows, credentials present, (with `batch`) a provider litellm can create batches for, and (with
    `preflight`) its endpoint reachable. `batch_journal`: where submitted batches are journaled (None: memory)."""
    models = list(dict.fromkeys(m for m in models if m))
    if not models:
        return None
    routes = ModelRoutes.load(options.models, api_base=options.api_base, rpm=options.rpm, tpm=options.tpm)
    for model in models:
        route = routes.route(model)
        validate_model(route.model, route.api_base)
        if options.batch:
            BatchCollector.check(route)
    cache = ResponseCache(options.cache_dir) if options.use_cache else None
    gateway = LLMGateway(cache=cache, concurrency=options.concurrency, fixed_concurrency=options.fixed_concurrency,
                         max_retries=options.max_retries,
                         retry_seconds=options.retry_seconds, timeout=options.timeout, routes=routes,
                         usage=UsageTracker(log=usage_log))
    if options.batch:
        where = batch_journal.resolve() if batch_journal is not None else uuid.uuid4().hex
        gateway.batcher = BatchCollector(gateway, BatchJournal(batch_journal), run_id_for(where))
    if options.preflight:
        checked = [routes.route(m) for m in models]
        asyncio.run(preflight(checked, {r.name: gateway.api_key_for(r) for r in checked}))
    return gateway
