"""Benchmarks by name (`--bench mtrag`) or path, located, cached and read."""
