"""CXMArena conversation-analytics tasks, one bench each (`cxm-intent`, `cxm-quality`, `cxm-tool-calls`,
`cxm-answer-classification`, `cxm-kb-refinement`, `cxm-article-search`).

Loaders read the public release (`sprinklr-huggingface/CXM_Arena`) or plain JSONL files; `runners` put one
item to a model through the LLM gateway; metrics are pure functions; `score` turns prediction rows into
reports; `ragjudge cxm` is the CLI.
"""
