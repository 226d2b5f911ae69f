"""`cxm-quality`: answer an agent-quality questionnaire about a conversation (the paper's Table 5)."""
