"""CXMArena conversation-analytics tasks, one bench each (`cxm-intent`, `cxm-quality`, ...), each in its own folder
with the skeleton's parts (docs/extending.md); what they share is here: the bench base and a predictions file as the
system (`bench.py`, `solver.py`, `rows.py`), the data (`data.py`, `models.py`, `tables.py`, `conversation.py`,
`hub.py`), the prompts, the KB search (`retrieve.py`, `queries.py`, `kb_retrieval.py`), the paper's figures
(`paper.py`, `references.py`), the metrics and the sample log's common parts.
"""
