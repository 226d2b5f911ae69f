"""`cxm-kb-refinement`: find similar and contradictory article pairs in a knowledge base (the paper's Table 2)."""
