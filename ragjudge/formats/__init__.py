"""Readers and writers for the file formats ragjudge speaks (MTRAG JSONL, tidy tables, ...)."""
