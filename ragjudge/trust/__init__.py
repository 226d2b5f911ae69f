"""How far a judge can be trusted on your app: labels, agreement with them, and means with honest intervals.

- `labels`: the `ragjudge.labels/1` schema (a person's value for a sample and a metric) and its readers;
- `sampling`: which samples to label (a seeded uniform draw, optionally stratified);
- `intervals`: the `Interval` every estimate here is reported as;
- `ppi`: prediction-powered means (PPI++, power-tuned) and paired differences, with labels-only baselines;
- `bootstrap`: seeded bootstrap intervals over samples ("judge only");
- `agreement`: how a judge agrees with the labels (pass/fail, numbers, ordinals), with bootstrap intervals.

Everything here is a pure function of arrays or records; the API (`ragjudge.api.trust`) reads runs and files.
"""
