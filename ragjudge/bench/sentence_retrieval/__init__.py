"""Sentence retrieval for open-ended dialogues (Harel et al., SIGIR 2022) as a ragjudge bench."""
