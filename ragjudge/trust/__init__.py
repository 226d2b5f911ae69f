"""How far a judge can be trusted on your app: labels, agreement with them, and means with honest intervals.

- `labels`: the `ragjudge.labels/1` schema (a person's value for a sample and a metric) and its readers;
- `sampling`: which samples to label (a seeded uniform draw, optionally stratified);
- `intervals`: the `Interval` every estimate here is reported as;
- `ppi`: prediction-powered means (PPI++, power-tuned) and paired differences, with labels-only baselines;
- `bootstrap`: seeded bootstrap intervals over samples ("judge only");
- `agreement`: how a judge agrees with the labels (pass/fail, numbers, ordinals), with bootstrap intervals;
- `runs`: all of it on a run's samples (what the API, the CLI, the report and `assert_mean` call).

Everything but `runs` is a pure function of arrays or records; `ragjudge.api.trust` exports `runs`.
"""
