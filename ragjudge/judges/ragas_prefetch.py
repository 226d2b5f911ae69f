"""RAGAS judges' first requests, sent before ragas is imported.

Importing ragas takes seconds (datasets, LangChain, the OpenAI SDK), yet every RAGAS judge's first LLM call depends
only on the item: faithfulness's and answer correctness's statements, context recall's classification, context
precision's verdict per context, answer relevancy's question, context relevance's two ratings. ragas renders those
prompts as fixed text (instruction, output schema, examples: `PydanticPrompt.to_string`) followed by the input as
JSON; `ragas_prompts` holds that fixed text as the installed ragas renders it, stamped with its version. So a judge
can send the very request ragas will send (the same messages and parameters, hence the same cache key) while ragas
imports in a background thread; when ragas's own call comes, it takes the answer already on its way
(`Prefetched.take`, in `GatewayRagasLLM`) instead of asking again: no request is added, none is wasted.

Prefetching is on only when the installed ragas is the snapshot's version (read from the package metadata, without
importing ragas: another version may word its prompts otherwise, and a request ragas will not send would be paid for
nothing) and the run has a response cache (an answer is then never asked twice, whatever the timing);
RAGJUDGE_RAGAS_PREFETCH=0 turns it off. Off, the judges run as they always do. One cost: when an earlier call of an
item fails, ragas stops there and the requests sent ahead for its later calls (context precision's other contexts,
context relevance's second rating) are paid for unread (cached: a rerun with `--retry-errors` reads them).
`python -m ragjudge.judges.ragas_prefetch --write` regenerates the snapshot from the installed ragas
(tests/test_ragas_prefetch.py fails until it is regenerated after a ragas upgrade).
"""

from __future__ import annotations

import asyncio
import os
import sys
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pydantic_core

from ragjudge.judges import ragas_prompts
from ragjudge.llm.cache import cache_key

if TYPE_CHECKING:
    from ragjudge.llm import LLMGateway, LLMResponse

SNAPSHOT = Path(__file__).with_name("ragas_prompts.py")


@cache
def installed_ragas() -> str | None:
    """The installed ragas's version, from its metadata (importing ragas takes seconds); None when absent."""
    try:
        return metadata.version("ragas")
    except metadata.PackageNotFoundError:
        return None


def enabled(gateway: LLMGateway | None, stamped: str | None = ragas_prompts.RAGAS_VERSION) -> bool:
    """Whether first requests may be sent ahead: the snapshot (stamped with `stamped`) matches the installed ragas,
    the run has a cache, and RAGJUDGE_RAGAS_PREFETCH is not 0 (the way to rule prefetching out when diagnosing)."""
    if os.environ.get("RAGJUDGE_RAGAS_PREFETCH", "1").strip() == "0":
        return False
    return gateway is not None and gateway.cache is not None and installed_ragas() == stamped


def render(prompt: str, **data: str | None) -> str:
    """What ragas's `PydanticPrompt.to_string` renders for the snapshot's `prompt` on `data` (its input model's
    fields, in their order; None fields left out, as ragas's `exclude_none`)."""
    fixed = ragas_prompts.PROMPTS[prompt]
    if list(data) != fixed["fields"]:
        raise ValueError(f"{prompt} takes {fixed['fields']}, not {list(data)}")
    body = pydantic_core.to_json({k: v for k, v in data.items() if v is not None}, indent=4).decode()
    return f"{fixed['head']}input: {body}\nOutput: "


def template(name: str, index: int, **fields: str) -> str:
    """A ragas metric's own string template (ContextRelevance's), filled as the metric fills it."""
    return ragas_prompts.TEMPLATES[name][index].format(**fields)


class Prefetched:
    """One item's first requests on their way (through the gateway: cache, pacing, retries, accounting): ragas's own
    call for the same messages and parameters takes its answer (`take`); those it never asks for are awaited
    (`settle`: an earlier stage failed) or cancelled with the run (`cancel`)."""

    def __init__(self, gateway: LLMGateway, model: str, params: dict[str, Any]):
        self.gateway = gateway
        self.model = model
        self.params = dict(params)
        self._tasks: dict[str, asyncio.Task[LLMResponse]] = {}

    def send(self, prompts: list[str]) -> None:
        """Each prompt as the one user message ragas's prompt becomes (`GatewayRagasLLM.messages`)."""
        for text in prompts:
            messages = [{"role": "user", "content": text}]
            key = cache_key(self.model, messages, self.params)
            if key not in self._tasks:  # the same prompt twice (a context repeated): ragas's second ask hits the cache
                task = asyncio.create_task(self.gateway.complete(self.model, messages, **self.params))
                task.add_done_callback(_retrieved)
                self._tasks[key] = task

    @property
    def pending(self) -> int:
        """Requests sent ahead and not taken yet."""
        return len(self._tasks)

    async def on_their_way(self, patience: float = 0.2) -> None:
        """Return once the gateway has sent a request (or answered one from its cache), or after `patience` seconds.
        Awaited before ragas's import starts: an import holds the interpreter much of the time, and the first
        requests are sent faster without it (about 0.4 s sooner on two loaded cores)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + patience
        while (not self.gateway.requests_sent and not any(t.done() for t in self._tasks.values())
               and loop.time() < deadline):
            await asyncio.sleep(0.005)

    @property
    def answered_from_cache(self) -> bool:
        """An answer sent ahead came from the response cache: a rerun, whose later steps (vectors) are likely kept
        too, so a local model need not be loaded ahead."""
        return any(t.done() and not t.cancelled() and t.exception() is None and t.result().cached
                   for t in self._tasks.values())

    def take(self, model: str, messages: list[dict[str, str]], params: dict[str, Any]
             ) -> asyncio.Task[LLMResponse] | None:
        """The request sent ahead for exactly this call, or None (then the caller asks the gateway)."""
        return self._tasks.pop(cache_key(model, messages, params), None)

    async def settle(self) -> None:
        """Wait for the requests ragas did not ask for (after a failed earlier stage): their answers are cached,
        their failures already the item's; nothing is left running when the run ends."""
        tasks, self._tasks = list(self._tasks.values()), {}
        await asyncio.gather(*tasks, return_exceptions=True)

    def cancel(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        self._tasks = {}


def _retrieved(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()  # read: a failure ragas never asked about is not "never retrieved" at exit


# -- the snapshot -------------------------------------------------------------------------------------------------

_NO_INPUT = "Input: (None)\nOutput: "


def snapshot_source() -> str:
    """`ragas_prompts.py` as the installed ragas renders its prompts (imports ragas)."""
    from ragjudge.judges import ragas_adapter as ra

    prompts = {"statement_generator": ra.StatementGeneratorPrompt,
               "context_recall": ra.ContextRecallClassificationPrompt,
               "context_precision": ra.ContextPrecisionPrompt, "response_relevance": ra.ResponseRelevancePrompt}
    fixed: dict[str, dict[str, Any]] = {}
    for name, cls in prompts.items():
        text = cls().to_string(None)
        if not text.endswith(_NO_INPUT):
            raise RuntimeError(f"ragas {installed_ragas()} renders {cls.__name__} otherwise: update render()")
        fixed[name] = {"fields": list(cls.input_model.model_fields), "head": text[: -len(_NO_INPUT)]}
    relevance = ra.ContextRelevance
    templates = {"context_relevance": [relevance.template_relevance1, relevance.template_relevance2]}
    lines = [
        f'"""The fixed text of the ragas {installed_ragas()} prompts RAGAS judges send first (see ragas_prefetch).',
        "",
        "Generated by `python -m ragjudge.judges.ragas_prefetch --write` from the installed ragas: do not edit.",
        '"""',
        "# ruff: noqa: E501",
        "",
        f"RAGAS_VERSION = {installed_ragas()!r}",
        "",
        "PROMPTS: dict[str, dict] = {",
        *(f"    {name!r}: {{\"fields\": {p['fields']!r}, \"head\": {p['head']!r}}}," for name, p in fixed.items()),
        "}",
        "",
        "TEMPLATES: dict[str, list[str]] = {",
        *(f"    {name!r}: {texts!r}," for name, texts in templates.items()),
        "}",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print("usage: python -m ragjudge.judges.ragas_prefetch --write  (regenerates ragas_prompts.py from the "
              "installed ragas)", file=sys.stderr)
        return 2
    SNAPSHOT.write_text(snapshot_source(), encoding="utf-8")
    print(f"wrote {SNAPSHOT} (ragas {installed_ragas()})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
