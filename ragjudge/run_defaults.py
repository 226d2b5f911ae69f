"""Defaults of a run's LLM settings, in a module the command line can import without the LLM stack."""

DEFAULT_CONCURRENCY = 16
"""LLM requests in flight unless told: RAGAS's worker count (issue 44: at 8, a run against a judge answering in
200 ms took 23.7 s where 16 took 13.2 s). It is a ceiling, not a pace: each endpoint's limiter keeps requests below
the provider's announced or given rate and steps down on 429s."""
