"""`cxm-intent`: pick one intent per conversation from a taxonomy (the paper's Table 4)."""
