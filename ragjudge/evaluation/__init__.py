"""The evaluation loop: generate answers, judge them, condition on IDK, summarise, write results."""
