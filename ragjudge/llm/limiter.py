"""Pace requests to one provider endpoint below its rate limit, instead of finding the limit by hammering it.

One limiter per endpoint is shared by every generator, judge and rewrite call of a run. Requests start at
evenly spaced instants (no bursts: 600 RPM is one start every 0.1 s), at most `rpm` a minute and, when a
token budget is known, `tpm` estimated tokens a minute, spread the same way (a request of n tokens holds the
next one back by n/tpm minutes: no minute's worth of tokens in a burst at the start). Waiting requests are
released oldest first (by when the item was first tried), so a retried request never starves behind new
ones. A 429 pauses the whole endpoint for its Retry-After and steps the rates down; successes bring them
back up. Providers that announce their limits in `x-ratelimit-limit-requests` / `-tokens` headers set the
rates the user did not give.

How many requests an endpoint has in flight adapts too (`InFlightLimit`), as TCP congestion control and Netflix's
concurrency-limits do: the rate a provider allows, and how many requests it answers at once without slowing, are
found from its answers rather than guessed by the user.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ragjudge.defaults import CONCURRENCY_CAP

SAFETY = 0.98
"""Aim just under the limit: a window-counting server must never see rpm + 1 requests in a minute."""
STEP_DOWN = 0.8
RECOVER_AFTER = 20
"""Successes in a row before the rate steps back up towards the target."""
REFUSED_BACKOFF = 0.7
"""A 429 episode of an endpoint without a rate to pace by multiplies its in-flight limit by this (TCP halves; a
gentler cut keeps the sawtooth under a provider's concurrency limit closer to it, at a few more 429s)."""
SLOW_BACKOFF = 0.9
"""Answers slowing down multiply the in-flight limit by this, at most once per limit's worth of answers."""
LATENCY_TOLERANCE = 1.5
"""Answers up to this many times slower than the fastest seen are the endpoint keeping up; slower, it is queueing."""
SMOOTHING = 0.1
"""Weight of one answer's latency in the running average (about the last ten answers count)."""


@dataclass
class LimiterStats:
    started: int = 0
    rate_limited: int = 0
    waited_seconds: float = 0.0
    current_rpm: float | None = None
    in_flight_limit: int | None = None
    """Requests the endpoint may have in flight now (run.json's `rate_limits`: where the adaptive limit settled)."""
    in_flight_limit_peak: int | None = None


class InFlightLimit:
    """How many requests one endpoint may have in flight: fixed, or adapted from `start` (AIMD with a latency check).

    Adaptive: while answers come back about as fast as the fastest seen (their running average within
    `LATENCY_TOLERANCE` of its minimum) and the limit is in use (at least half of it in flight), it grows, by one
    per answer at first (doubling every round trip, TCP's slow start) and, after its first cut, by one per
    round trip's worth of answers. A 429 cuts it by `REFUSED_BACKOFF` (once per episode), never below 1: the
    provider refuses more at once (the limiter calls `refused` only when no rate paces the endpoint: with one,
    the rate steps down instead, one answer to one signal). Slowing answers cut it by `SLOW_BACKOFF` but never
    below `start`: latency also grows with a mix of longer prompts, so it only takes back what growth added. Never above `cap`.
    Fixed (`adaptive=False`): always `start`, the hard cap a provider that punishes bursts needs."""

    def __init__(self, start: int, *, adaptive: bool = True, cap: int | None = None):
        self.start = max(1, start)
        self.adaptive = adaptive
        self.cap = max(self.start, cap if cap is not None else CONCURRENCY_CAP)
        self.limit = float(self.start)
        self.peak = self.start
        """The highest the limit went."""
        self.slow_start = True
        self.average: float | None = None
        """Running average of answer latency (seconds)."""
        self.fastest: float | None = None
        """The lowest that average went: the endpoint's latency when it keeps up."""
        self._cooldown = 0
        """Answers to let pass after a cut before cutting again (those in flight were sent under the old limit)."""

    @property
    def value(self) -> int:
        return int(self.limit)

    def answered(self, latency: float, busy: bool) -> None:
        """An answer came after `latency` seconds; `busy`: at least half the limit was in flight when it came."""
        if not self.adaptive:
            return
        self.average = latency if self.average is None else self.average + SMOOTHING * (latency - self.average)
        self.fastest = self.average if self.fastest is None else min(self.fastest, self.average)
        if self._cooldown:
            self._cooldown -= 1
        if self.average > LATENCY_TOLERANCE * self.fastest:
            if not self._cooldown and self.limit > self.start:
                self._cut(max(self.start, self.limit * SLOW_BACKOFF))
            return
        if busy:
            self.limit = min(self.cap, self.limit + (1.0 if self.slow_start else 1.0 / self.limit))
            self.peak = max(self.peak, self.value)

    def refused(self) -> None:
        """A 429 episode began."""
        if self.adaptive:
            self._cut(max(1.0, self.limit * REFUSED_BACKOFF))

    def _cut(self, limit: float) -> None:
        self.limit = limit
        self.slow_start = False
        self._cooldown = self.value


@dataclass(order=True)
class _Waiter:
    born: float
    seq: int
    tokens: int = field(compare=False)
    future: asyncio.Future[None] = field(compare=False)


class RateLimiter:
    """`rpm=None` and `tpm=None` (and no learnt limit): no pacing, only the 429 pause and oldest-first order.

    The limiter is the endpoint's one queue: it also caps the requests in flight (`in_flight_limit`, from
    `max_in_flight`, adaptive unless told; None: no cap; callers `release()` when a request returns, then report its
    outcome), so that before the rate is known (learnt from the first answers' headers) a crowd of waiting requests
    cannot all be let through at once."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None, *, name: str = "endpoint",
                 max_in_flight: int | None = None, adaptive: bool = True):
        self.name = name
        self.in_flight_limit = None if max_in_flight is None else InFlightLimit(max_in_flight, adaptive=adaptive)
        self.in_flight = 0
        self._busy = False
        """At least half the in-flight limit was in use when the last request returned."""
        self.target_rpm = rpm
        self.rpm = rpm
        self.target_tpm = tpm
        self.tpm = tpm
        self.stats = LimiterStats(current_rpm=rpm)
        self._note_limit()
        self._next_start = 0.0
        self._first_start: float | None = None
        """When the first request started: those sent before a rate was learnt are counted as if paced from it."""
        self._next_tokens = 0.0
        """When the tokens of the requests already started allow the next one to start."""
        self._paused_until = 0.0
        self._streak = 0
        self._heap: list[_Waiter] = []
        self._seq = itertools.count()
        self._dispatcher: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None

    # -- requests -----------------------------------------------------------------------------------

    async def acquire(self, born: float, tokens: int = 0) -> None:
        """Wait for this request's turn. `born`: when its item was first tried (older goes first)."""
        loop = asyncio.get_running_loop()
        waiter = _Waiter(born, next(self._seq), tokens, loop.create_future())
        heapq.heappush(self._heap, waiter)
        self._kick()
        queued = time.monotonic()
        try:
            await waiter.future
        except asyncio.CancelledError:
            if waiter.future.done() and not waiter.future.cancelled():
                self.release()  # let through just as the caller was cancelled: give the slot back
            raise
        finally:
            if not waiter.future.done():
                waiter.future.cancel()
        self.stats.waited_seconds += time.monotonic() - queued

    @property
    def max_in_flight(self) -> int | None:
        return None if self.in_flight_limit is None else self.in_flight_limit.value

    def release(self) -> None:
        """A request let through by `acquire` has returned (answered or failed)."""
        limit = self.max_in_flight
        self._busy = limit is not None and 2 * self.in_flight >= limit
        self.in_flight = max(0, self.in_flight - 1)
        if self._heap:
            self._kick()

    def on_success(self, headers: Mapping[str, str] | None = None, *, latency: float | None = None) -> None:
        """A request answered (after `release()`), `latency` seconds after it was let through."""
        self._learn(headers)
        if latency is not None and self.in_flight_limit is not None:
            before = self.in_flight_limit.value
            self.in_flight_limit.answered(latency, self._busy)
            self._note_limit()
            if self.in_flight_limit.value > before and self._heap:
                self._kick()
        self._streak += 1
        if self._streak < RECOVER_AFTER:
            return
        if self.rpm is not None and self.target_rpm is not None and self.rpm < self.target_rpm:
            self.rpm = min(self.target_rpm, self.rpm / STEP_DOWN)
            self.stats.current_rpm = self.rpm
            self._streak = 0
        if self.tpm is not None and self.target_tpm is not None and self.tpm < self.target_tpm:
            self.tpm = min(self.target_tpm, self.tpm / STEP_DOWN)
            self._streak = 0

    def on_rate_limited(self, retry_after: float | None, headers: Mapping[str, str] | None = None) -> None:
        """A 429: nobody starts before Retry-After, and the pace steps down once per such episode (a burst
        of 429s from requests already in flight is one signal, not many): the rates when known, else the
        requests in flight."""
        self.stats.rate_limited += 1
        self._streak = 0
        self._learn(headers)
        now = time.monotonic()
        pause = retry_after if retry_after is not None and retry_after >= 0 else 1.0
        new_episode = now >= self._paused_until
        self._paused_until = max(self._paused_until, now + pause)
        if new_episode and self.rpm is not None:
            self.rpm = max(1.0, self.rpm * STEP_DOWN)
            self.stats.current_rpm = self.rpm
        if new_episode and self.tpm is not None:
            self.tpm = max(1.0, self.tpm * STEP_DOWN)
        if new_episode and self.in_flight_limit is not None and self.rpm is None and self.tpm is None:
            self.in_flight_limit.refused()
            self._note_limit()
        self._kick()

    def _note_limit(self) -> None:
        if self.in_flight_limit is not None:
            self.stats.in_flight_limit = self.in_flight_limit.value
            self.stats.in_flight_limit_peak = self.in_flight_limit.peak

    # -- pacing ---------------------------------------------------------------------------------------

    def _interval(self) -> float:
        return 0.0 if not self.rpm else 60.0 / (self.rpm * SAFETY)

    def _kick(self) -> None:
        if self._wake is not None:
            self._wake.set()
        if self._dispatcher is None or self._dispatcher.done():
            self._wake = asyncio.Event()
            self._dispatcher = asyncio.get_running_loop().create_task(self._dispatch())

    async def _dispatch(self) -> None:
        assert self._wake is not None
        while self._heap:
            head = self._heap[0]
            if head.future.done():  # cancelled while waiting
                heapq.heappop(self._heap)
                continue
            limit = self.max_in_flight
            if limit is not None and self.in_flight >= limit:
                self._wake.clear()  # `release` wakes us
                await self._wake.wait()
                continue
            now = time.monotonic()
            at = max(self._next_start, self._paused_until, self._next_tokens if self.tpm else 0.0)
            if at > now:
                self._wake.clear()
                try:  # a 429 or a new older request may change the plan: wake early for them
                    await asyncio.wait_for(self._wake.wait(), timeout=at - now)
                except asyncio.TimeoutError:
                    pass
                continue
            heapq.heappop(self._heap)
            self._next_start = max(now, self._next_start) + self._interval()
            if self.tpm:
                spend = min(head.tokens, self.tpm) * 60.0 / (self.tpm * SAFETY)
                self._next_tokens = max(now, self._next_tokens) + spend
            self.stats.started += 1
            if self._first_start is None:
                self._first_start = now
            self.in_flight += 1
            head.future.set_result(None)

    def _learn(self, headers: Mapping[str, str] | None) -> None:
        """Adopt the provider's announced request and token limits the user did not set (OpenAI, Azure, Groq...)."""
        if not headers or (self.target_rpm is not None and self.target_tpm is not None):
            return
        lowered = {k.lower(): v for k, v in headers.items()}
        if self.target_rpm is None and (value := _positive(lowered.get("x-ratelimit-limit-requests"))):
            self.target_rpm = self.rpm = value
            self.stats.current_rpm = value
            if self._first_start is not None:  # the requests sent unpaced so far take their turns first
                self._next_start = max(self._next_start, self._first_start + self.stats.started * self._interval())
        if self.target_tpm is None and (value := _positive(lowered.get("x-ratelimit-limit-tokens"))):
            self.target_tpm = self.tpm = value


def _positive(header: str | None) -> float | None:
    try:
        value = float(header) if header is not None else None
    except ValueError:
        return None
    return value if value is not None and value > 0 else None
