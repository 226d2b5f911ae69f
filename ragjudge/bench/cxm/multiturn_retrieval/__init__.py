"""`cxm-multiturn-retrieval`: a conversation's query retrieves knowledge-base articles (the paper's Table 8)."""
