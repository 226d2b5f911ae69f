"""Embeddings: one persistent store that every encoder reads and writes (`store`), the spaces that key it
(`spaces`), the run's choice of store (`scope`), and the token-level machinery BERTScore (RB_alg) is computed with
(`token_encoder` encodes, `greedy_match` matches tokens, `bertscore` and `cached_bertscore` score)."""
