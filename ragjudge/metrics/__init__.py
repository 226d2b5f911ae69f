"""Metrics as small typed pure functions: ranking (`ranking`: precision, recall, hit, MRR, nDCG, AP at k),
classification (`classification`: accuracy, macro-F1, per-class precision and recall), and text overlap (`rouge`,
`rb_alg`'s aggregate). Every bench calls these; what models compute (BERTScore) lives beside the encoders in
`ragjudge.embeddings`."""
