"""Defaults of the gateway, which are a run's unless told (`engine.run_settings` declares the settings with these
values), in a module the command line can import without the LLM stack."""

DEFAULT_CONCURRENCY = 16
"""LLM requests in flight unless told: RAGAS's worker count (issue 44: at 8, a run against a judge answering in
200 ms took 23.7 s where 16 took 13.2 s). It is a ceiling, not a pace: each endpoint's limiter keeps requests below
the provider's announced or given rate and steps down on 429s."""
DEFAULT_MAX_RETRIES = 6
DEFAULT_TIMEOUT = 120.0
"""Seconds per request."""
DEFAULT_RETRY_SECONDS = 600.0
"""How long one request may keep being retried (rate limits, outages) before it fails for good."""
