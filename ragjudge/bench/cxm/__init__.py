"""CXMArena conversation-analytics tasks, one bench each (`cxm-intent`, `cxm-quality`, `cxm-tool-calls`,
`cxm-answer-classification`, `cxm-kb-refinement`, `cxm-article-search`, `cxm-multiturn-retrieval`).

Each bench is a folder with the skeleton's parts (`intent/`, `quality/`, `tool_calls/`, `answer_classification/`,
`kb_refinement/`, `article_search/`, `multiturn_retrieval/`: `bench.py`, `data.py`, `solver.py`, `scorers.py`,
`summary.py`, `paper.py`, `samples.py`). What they share is here: the bench base and a predictions file as the system
(`bench.py`, `solver.py`), the prediction rows (`rows.py`), the summary from a task's report (`summary.py`), the data
(`data.py`, `models.py`, `tables.py`, `conversation.py`, `hub.py`), the prompts (`prompts.py`), the KB search
(`retrieve.py`, `queries.py`, `kb_retrieval.py`), the paper's figures and when one is shown (`paper.py`,
`references.py`), the metrics (`metrics.py`) and the sample log's common parts (`samples.py`).
"""
