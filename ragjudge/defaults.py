"""Defaults of the gateway, which are a run's unless told (`engine.run_settings` declares the settings with these
values), in a module the command line can import without the LLM stack."""

DEFAULT_CONCURRENCY = 16
"""LLM requests in flight per endpoint at the start, unless told: RAGAS's worker count (issue 44: at 8, a run against
a judge answering in 200 ms took 23.7 s where 16 took 13.2 s). From there each endpoint's limit adapts
(`limiter.InFlightLimit`): more while answers come back as fast, fewer on 429s; with `fixed_concurrency` it is a hard
cap. It is not a pace: each endpoint's limiter keeps requests below the provider's announced or given rate."""
CONCURRENCY_CAP = 256
"""The most requests an adaptive limit lets one endpoint have in flight (a `concurrency` above it is its own cap):
a bound on open connections whatever an endpoint seems to take."""
DEFAULT_MAX_RETRIES = 6
DEFAULT_TIMEOUT = 120.0
"""Seconds per request."""
DEFAULT_RETRY_SECONDS = 600.0
"""How long one request may keep being retried (rate limits, outages) before it fails for good."""
