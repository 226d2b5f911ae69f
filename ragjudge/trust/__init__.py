"""How far a judge can be trusted on your app: labels, agreement with them, and means with honest intervals.

Everything but `runs` (all of it on a run's samples: what the API, the CLI, the report and `assert_mean` call) is a
pure function of arrays or records; `ragjudge.api.trust` exports `runs`. See docs/trust.md.
"""
