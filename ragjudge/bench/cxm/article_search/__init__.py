"""`cxm-article-search`: rank knowledge-base articles for a customer's question (the paper's Table 6)."""
