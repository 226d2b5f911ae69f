"""Metrics as small typed pure functions (ranking, classification, text overlap) that every bench calls; what
models compute (BERTScore) lives beside the encoders in `ragjudge.embeddings`.
"""
