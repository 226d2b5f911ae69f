"""Embeddings: one persistent store that every encoder reads and writes (see `store`), the spaces that key it,
and the run's choice of store (`scope`)."""
