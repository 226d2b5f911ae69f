"""`--batch`: a run's LLM requests through the provider's batch interface: half the price, no rate-limit waits.

The gateway still answers from the response cache first; a request that misses it is handed here and its caller
awaits a future. Requests to one model on one endpoint are collected until none has arrived for `linger` seconds:
the engine puts every item of every judge in flight at once, so a judge's whole first stage lands in one batch
(RL_F's second stage, which needs the first's answers, in a second). The batch is polled with a progress bar;
its answers go into the response cache under the key a direct call would use, then the futures resolve and the
judges parse them with their usual parsers (an unparsable answer is evicted from the cache as always). A line
that failed for a reason worth retrying (429, 5xx, an expired or cancelled batch) goes into a new batch, at most
`ROUNDS` batches in all; other failures are the request's error.

Resume (see batch_journal.py): every batch is journaled with its custom ids (= cache keys). After a restart a
request whose key is in a journaled, unfinished batch waits for that batch instead of being submitted again.
A batch created but not yet journaled when the process died is found by listing the endpoint's batches before
the first submission: each carries the run's id in its metadata, and its input file gives its custom ids.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ragjudge.errors import UsageError
from ragjudge.llm._litellm import litellm
from ragjudge.llm.batch_api import (
    MAX_LINES,
    BatchAPI,
    BatchGone,
    BatchState,
    batch_cost,
    batch_provider,
    chunks,
    request_body,
)
from ragjudge.llm.batch_journal import BatchJournal, JournaledBatch
from ragjudge.llm.faults import LLMError
from ragjudge.llm.wire import LLMResponse
from ragjudge.progress import ProgressBars

if TYPE_CHECKING:
    from ragjudge.llm.gateway import LLMGateway
    from ragjudge.llm.routes import ModelRoute

LINGER_SECONDS = 1.0
"""A batch is submitted once no new request for it has arrived for this long."""
POLL_FIRST, POLL_MAX = 0.5, 60.0
"""Polling starts quick (small batches finish in seconds) and slows down to once a minute."""
ROUNDS = 3
"""Batches one request may go through before a retryable failure becomes its error."""
RETRYABLE_LINE_CODES = {"batch_expired", "batch_cancelled"}


def run_id_for(path: Any) -> str:
    """The id a run's batches carry in their metadata: derived from where the run writes, stable across restarts."""
    return hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:20]


@dataclass
class _Request:
    key: str
    route: ModelRoute
    body: dict[str, Any]
    waiters: list[asyncio.Future[LLMResponse]] = field(default_factory=list)
    rounds: int = 0


@dataclass
class _Watch:
    record: JournaledBatch
    api: BatchAPI
    requests: dict[str, _Request] = field(default_factory=dict)
    since: float = field(default_factory=time.monotonic)


class BatchCollector:
    """Collects, submits, follows and reads back the batches of one run (one per gateway)."""

    def __init__(self, gateway: LLMGateway, journal: BatchJournal, run_id: str, *, linger: float = LINGER_SECONDS,
                 poll_first: float = POLL_FIRST, poll_max: float = POLL_MAX):
        self.gateway = gateway
        self.journal = journal
        self.run_id = run_id
        self.linger = linger
        self.poll_first = poll_first
        self.poll_max = poll_max
        self.bars = ProgressBars(None)
        """Set by the engine once its progress display is up."""
        self.report: dict[str, dict[str, Any]] = {}
        """Batch id → model, requests, status, resumed: what run.json records."""
        self._pending: dict[tuple[str, str], dict[str, _Request]] = {}
        self._last: dict[tuple[str, str], float] = {}
        self._timers: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._watches: dict[str, _Watch] = {}
        self._watched_key: dict[str, str] = {}
        self._sending: dict[str, _Request] = {}
        self._apis: dict[str, BatchAPI] = {}
        self._discovery: dict[tuple[str, str | None], asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    @staticmethod
    def check(route: ModelRoute) -> None:
        """Refuse, before any work, a model whose provider litellm cannot create batches for."""
        if batch_provider(route) is None:
            raise UsageError(f"--batch: litellm cannot create batches for {route.name} (provider {route.provider}); "
                             "batches work for openai/, azure/ and litellm_proxy/ models: drop --batch or judge "
                             "with one of those")

    async def stop(self) -> None:
        """Stop collecting and following, as a killed process would: submitted batches stay journaled."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- requests -------------------------------------------------------------------------------------

    async def complete(self, route: ModelRoute, key: str, messages: list[dict[str, Any]],
                       params: dict[str, Any]) -> LLMResponse:
        """The answer to one chat request, through a batch; raises LLMError when it finally fails."""
        future: asyncio.Future[LLMResponse] = asyncio.get_running_loop().create_future()
        self._add(_Request(key, route, request_body(route, messages, params), [future]))
        return await future

    def _add(self, request: _Request) -> None:
        key = request.key
        if (sending := self._sending.get(key)) is not None:  # on its way into a batch: wait for that one
            sending.waiters.extend(request.waiters)
            return
        if (batch_id := self._watched_key.get(key)) is not None:
            _merge(self._watches[batch_id].requests, request)
            return
        if (record := self.journal.open_batch(key)) is not None:  # submitted by an earlier invocation
            _merge(self._watch(record, resumed=True).requests, request)
            return
        group = (request.route.endpoint, request.route.model)
        if not _merge(self._pending.setdefault(group, {}), request):  # asked twice (two judges alike): one line
            return
        self._last[group] = time.monotonic()
        timer = self._timers.get(group)
        if timer is None or timer.done():
            self._timers[group] = self._spawn(self._flush_later(group))

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- submitting -----------------------------------------------------------------------------------

    async def _flush_later(self, group: tuple[str, str]) -> None:
        try:
            while True:
                quiet = time.monotonic() - self._last[group]
                if quiet >= self.linger or len(self._pending.get(group, {})) >= MAX_LINES:
                    break
                await asyncio.sleep(self.linger - quiet)
        except asyncio.CancelledError:  # the run is ending (Ctrl-C, an error): nothing was sent, nothing is kept
            self._pending.pop(group, None)
            self._timers.pop(group, None)
            raise
        del self._timers[group]
        requests = list(self._pending.pop(group, {}).values())
        self._sending.update((r.key, r) for r in requests)
        try:
            await self._send(requests)
        except Exception as exc:  # e.g. ProviderUnreachable: every caller sees it, none waits forever
            _fail(requests, exc)
        finally:
            for request in requests:
                if self._sending.get(request.key) is request:
                    del self._sending[request.key]

    async def _send(self, requests: list[_Request]) -> None:
        if not requests:
            return
        api = self._api(requests[0].route)
        await self._discover(api)
        fresh = []
        for request in requests:  # adopted batches (found by discovery) may already hold some of them
            if request.key in self._watched_key or self.journal.open_batch(request.key) is not None:
                del self._sending[request.key]
                self._add(request)
            else:
                fresh.append(request)
        for chunk in chunks([r.body for r in fresh]):
            await self._submit(api, [fresh[i] for i in chunk])

    async def _submit(self, api: BatchAPI, requests: list[_Request]) -> None:
        route = api.route
        lines = [{"custom_id": r.key, "method": "POST", "url": api.url, "body": r.body} for r in requests]
        usage = self.gateway.usage
        usage.record(route.name, requests=len(lines), batched=len(lines))  # before sending, as direct calls are
        self.gateway.requests_sent += len(lines)
        metadata = {"ragjudge_run": self.run_id, "ragjudge_model": route.name[:500]}
        try:
            batch_id, file_id = await api.submit(lines, metadata)
        except LLMError as exc:
            usage.record(route.name, failures=len(lines))
            _fail(requests, exc)
            return
        record = JournaledBatch(batch_id, file_id, route.endpoint, route.name, [r.key for r in requests])
        self.journal.submitted(record)
        watch = self._watch(record, resumed=False)
        for request in requests:
            _merge(watch.requests, request)
            del self._sending[request.key]

    # -- following -----------------------------------------------------------------------------------

    def _watch(self, record: JournaledBatch, *, resumed: bool) -> _Watch:
        if record.batch_id in self._watches:
            return self._watches[record.batch_id]
        route = self.gateway.routes.route(record.model)
        watch = self._watches[record.batch_id] = _Watch(record, self._api(route))
        for key in record.keys:
            self._watched_key[key] = record.batch_id
        self.report[record.batch_id] = {"model": record.model, "requests": len(record.keys), "status": None,
                                        "resumed": resumed or record.adopted}
        self._spawn(self._follow(watch))
        return watch

    async def _follow(self, watch: _Watch) -> None:
        record = watch.record
        try:
            state = await self._poll(watch)
            answered, failed = await self._results(watch, state)
        except asyncio.CancelledError:  # the run is ending: the batch stays journaled, a rerun collects it
            self._unwatch(record)
            raise
        except BatchGone as exc:  # unknown to the provider: nothing of it will be answered or billed
            state, answered, failed = BatchState(status="gone"), {}, {k: (str(exc), True) for k in record.keys}
        except Exception as exc:
            _fail(list(watch.requests.values()), exc)  # still journaled as unfinished: a rerun waits for it again
            self._unwatch(record)
            return
        self.report[record.batch_id]["status"] = state.status
        self.journal.finished(record.batch_id, state.status)
        self._unwatch(record)
        for key, response in answered.items():
            if (request := watch.requests.get(key)) is not None:
                _resolve(request, response)
        for key, (reason, retryable) in failed.items():
            if (request := watch.requests.get(key)) is None:
                continue  # asked by nobody in this run: a rerun that needs it submits it again
            if retryable and request.rounds + 1 < ROUNDS:
                self.gateway.usage.record(record.model, retries=1)
                request.rounds += 1
                self._add(request)
            else:
                self.gateway.usage.record(record.model, failures=1)
                _fail([request], LLMError(reason))

    def _unwatch(self, record: JournaledBatch) -> None:
        self._watches.pop(record.batch_id, None)
        for key in record.keys:
            if self._watched_key.get(key) == record.batch_id:
                del self._watched_key[key]

    async def _poll(self, watch: _Watch) -> BatchState:
        record = watch.record
        advance = self.bars.bar(f"batch {record.model}", total=len(record.keys))
        shown, interval = 0, self.poll_first
        while True:
            state = await watch.api.state(record.batch_id)
            if state.done > shown:
                advance(min(state.done, len(record.keys)) - shown)
                shown = min(state.done, len(record.keys))
            if state.final:
                return state
            await asyncio.sleep(interval)
            interval = min(self.poll_max, interval * 1.6)

    async def _results(self, watch: _Watch, state: BatchState
                       ) -> tuple[dict[str, LLMResponse], dict[str, tuple[str, bool]]]:
        """Every answer into the cache (and its usage recorded); every other key with its reason and whether a
        new batch may fix it."""
        record, model = watch.record, watch.record.model
        rows = await watch.api.read(state.output_file_id) if state.output_file_id else []
        rows += await watch.api.read(state.error_file_id) if state.error_file_id else []
        answered: dict[str, LLMResponse] = {}
        failed: dict[str, tuple[str, bool]] = {}
        latency = time.monotonic() - watch.since
        keys = set(record.keys)
        for row in rows:
            key = row.get("custom_id")
            if key not in keys or key in answered:
                continue
            outcome = self._line(row, watch, latency)
            if isinstance(outcome, tuple):
                failed[key] = outcome
            else:
                answered[key] = outcome
                failed.pop(key, None)
        why = f"batch {record.batch_id} ended {state.status}" + (f": {'; '.join(state.errors)}" if state.errors else "")
        for key in keys - answered.keys() - failed.keys():  # cancelled, expired or failed before answering it
            failed[key] = (f"{model}: {why}"[:500], state.status in ("expired", "cancelled"))
        return answered, failed

    def _line(self, row: dict[str, Any], watch: _Watch, latency: float) -> LLMResponse | tuple[str, bool]:
        """One output or error line: the answer, cached and accounted, or (reason, retryable)."""
        model, key = watch.record.model, str(row["custom_id"])
        response = row.get("response") or {}
        status = response.get("status_code") if isinstance(response, dict) else None
        body = response.get("body") if isinstance(response, dict) else None
        error = row.get("error") or (body.get("error") if isinstance(body, dict) else None)
        if status != 200 or not isinstance(body, dict) or "choices" not in body:
            code = error.get("code") if isinstance(error, dict) else None
            message = error.get("message") if isinstance(error, dict) else None
            retryable = (isinstance(status, int) and (status in (408, 429) or status >= 500)) \
                or code in RETRYABLE_LINE_CODES
            return f"{model}: HTTP {status} in batch {watch.record.batch_id}: {message or code or 'no answer'}"[:500], \
                retryable
        try:
            parsed = self.gateway._parse(litellm().ModelResponse(**body), model, latency)
        except Exception as exc:  # a garbled answer: worth another try, like a garbled body on a direct call
            return f"{model}: unreadable answer in batch {watch.record.batch_id}: {exc}"[:500], True
        parsed.cost = batch_cost(watch.api, body)
        cache = self.gateway.cache
        if cache is None or cache.get(key) is None:  # already read back by an earlier invocation: counted there
            self.gateway.usage.record(model, calls=1, prompt_tokens=parsed.prompt_tokens,
                                      completion_tokens=parsed.completion_tokens, cost=parsed.cost)
        return self.gateway.keep(key, watch.api.route, parsed)

    # -- endpoints ------------------------------------------------------------------------------------

    def _api(self, route: ModelRoute) -> BatchAPI:
        """One per model (its route: endpoint, credentials, provider); the endpoint's breaker is shared."""
        slot = route.name
        if slot not in self._apis:
            provider = batch_provider(route)
            if provider is None:
                self.check(route)
            gw = self.gateway
            self._apis[slot] = BatchAPI(route, str(provider), gw.api_key_for(route), gw._breaker(route),
                                        max_retries=gw.max_retries, backoff_base=gw.backoff_base)
        return self._apis[slot]

    async def _discover(self, api: BatchAPI) -> None:
        """Once per endpoint, before its first submission: adopt this run's batches that were created but
        never journaled (the process died in between)."""
        slot = (api.route.endpoint, api.route.api_key_env)
        known = self._discovery.get(slot)
        if known is None or known.cancelled():
            self._discovery[slot] = self._spawn(self._adopt(api))
        await asyncio.shield(self._discovery[slot])

    async def _adopt(self, api: BatchAPI) -> None:
        try:
            listed = await api.listed()
        except LLMError:  # a provider that cannot list batches: nothing to adopt
            return
        for state in listed:
            if state.metadata.get("ragjudge_run") != self.run_id or state.id in self.journal.batches:
                continue
            if state.status == "failed" or not state.input_file_id:
                continue
            try:
                keys = [str(row["custom_id"]) for row in await api.read(state.input_file_id) if "custom_id" in row]
            except LLMError:  # its input file is gone: its requests cannot be told, so they are asked anew
                continue
            model = state.metadata.get("ragjudge_model") or api.route.name
            self.journal.submitted(JournaledBatch(state.id, state.input_file_id, api.route.endpoint, model, keys,
                                                  adopted=True))


def _merge(requests: dict[str, _Request], request: _Request) -> bool:
    """Add `request`, or hand its waiters to the one already there for its key (both answered by one line).
    True when it is new."""
    known = requests.setdefault(request.key, request)
    if known is not request:
        known.waiters.extend(request.waiters)
    return known is request


def _resolve(request: _Request, response: LLMResponse) -> None:
    for future in request.waiters:
        if not future.done():
            future.set_result(replace(response))


def _fail(requests: list[_Request], exc: BaseException) -> None:
    for request in requests:
        for future in request.waiters:
            if not future.done():
                future.set_exception(exc)
