"""CDR: conversational data retrieval as a benchmark (`ragjudge eval --bench cdr`)."""
