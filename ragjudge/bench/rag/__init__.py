"""`--bench rag`: your own RAG app's records (question or conversation, answer, passages, reference), judged."""
