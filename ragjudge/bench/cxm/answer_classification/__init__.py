"""`cxm-answer-classification`: replies from retrieved articles, labelled by an LLM judge (the paper's Table 7)."""
