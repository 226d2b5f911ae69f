"""Assertion helpers for the common RAG checks; a failure explains itself in pytest's output.

Thresholds: the explicit argument, else the session's configured one, else the built-in default. A check whose LLM
judge cannot run in this session (no judge model, or offline) does not stop the test: the remaining checks still
run, and a test that otherwise passes is reported as skipped with the reason.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import pytest

from ragjudge.formats.samples import Score
from ragjudge.judges.criterion import Criterion
from ragjudge.pytest_plugin.config import DEFAULT_THRESHOLDS, RECALL
from ragjudge.pytest_plugin.recall import recall_result
from ragjudge.pytest_plugin.result import Check, RagResult

NO_ANSWERABILITY_EXPECTATION = ("CONVERSATIONAL", "UNDERSPECIFIED")
NOTHING_TO_RETRIEVE = ("UNANSWERABLE", "CONVERSATIONAL")
_CLIP = 400
_CLIP_RATIONALE = 1500


# -- shared machinery ----------------------------------------------------------------------
def _verbose(result: RagResult) -> bool:
    return result.owner is not None and result.owner.settings.verbosity >= 2


def _clip(text: str, limit: int, full: bool) -> str:
    text = text.strip()
    if full or len(text) <= limit:
        return text
    return text[:limit].rstrip() + f" … [{len(text) - limit} more characters; -vv shows all]"


def _threshold(result: RagResult, judge: str, given: float | None) -> float:
    if given is not None:
        return float(given)
    if result.owner is not None:
        configured = result.owner.settings.threshold(judge)
        if configured is not None:
            return configured
    return DEFAULT_THRESHOLDS[judge]


def _llm_available(result: RagResult) -> bool:
    return result.owner is not None and result.owner.settings.llm_unavailable is None


def _defer(result: RagResult, check: Check) -> None:
    """Record a check that could not run: the test is skipped at its end when no check ran, else reported with
    this check skipped."""
    result.checks.append(check)
    reason = f"ragjudge: {check.assertion} did not check {check.judge}: {check.note}"
    pending = result.owner.pending_skips if result.owner is not None else None
    if pending is None:
        pytest.skip(reason)
    if reason not in pending:
        pending.append(reason)


def _rationale(judgement: Score) -> str | None:
    if judgement.rationale:
        return judgement.rationale
    components = {k: v for k, v in judgement.details.items() if isinstance(v, float)}
    if components:  # RB_alg explains itself by its components
        return ", ".join(f"{k}={v:.3f}" for k, v in components.items())
    return judgement.raw


def _row(check: Check, judgement: Score | None) -> str:
    value = "-" if check.value is None else _figure(check, check.value)
    need = "" if check.threshold is None else f"needs >= {check.on_scale(check.threshold):g}"
    verdict = {True: "ok", False: "FAILED", None: "not checked"}[check.passed]
    model = f"  [{judgement.model}]" if judgement is not None and judgement.model else ""
    line = f"  {check.judge:<12} {check.metric:<12} = {value:<7} {need:<14} {verdict}{model}"
    return line + (f"\n      {check.note}" if check.note else "")


def _fail(result: RagResult, assertion: str, headline: str, checks: list[Check], judges: list[str],
          judgements: dict[str, Score] | None = None) -> None:
    __tracebackhide__ = True
    full = _verbose(result)
    judgements = {**result.judgements, **(judgements or {})}
    lines = [f"{assertion}: {headline}"]
    lines += [_row(c, judgements.get(c.judge)) for c in checks]
    turns = result.task.history
    if turns:
        lines.append(f"  conversation: {len(turns)} earlier turn(s); last: "
                     f"{turns[-1].speaker}: {_clip(turns[-1].text, 150, full)}")
    lines.append(f"  question:  {_clip(result.question, _CLIP, full)}")
    lines.append(f"  answer:    {_clip(result.answer, _CLIP, full)}")
    if result.reference and any(j in ("rb_alg", "rb_llm") for j in judges):
        lines.append(f"  reference: {_clip(result.reference, _CLIP, full)}")
    for name in judges:
        judgement = judgements.get(name)
        if judgement is None:
            continue
        if judgement.error:
            lines.append(f"  {name} error: {_clip(judgement.error, _CLIP_RATIONALE, full)}")
            if judgement.raw:
                lines.append(f"  {name} raw output: {_clip(judgement.raw, _CLIP, full)}")
        why = _rationale(judgement)
        if why and not judgement.error:
            body = _clip(why, _CLIP_RATIONALE, full).replace("\n", "\n    ")
            lines.append(f"  {name} rationale:\n    {body}")
    raise AssertionError("\n".join(lines))


def _figure(check: Check, value: float) -> str:
    """A score as the user reads it: on the criterion's scale (`2` on 1-5), else as the 0-1 score (`0.250`)."""
    return f"{check.on_scale(value):g}" if check.scale is not None else f"{value:.3f}"


def _score_check(result: RagResult, assertion: str, judge: str, threshold: float,
                 scale: tuple[float, float] | None = None) -> Check:
    """Compare `judge`'s score with `threshold`; a judge that could not run is deferred, not failed."""
    judgement = result.judgements[judge]
    check = Check(assertion=assertion, judge=judge, metric=judgement.metric, value=judgement.value,
                  threshold=threshold, passed=None, scale=scale)
    if judgement.details.get("llm_unavailable"):
        check.note = str(judgement.details["skipped"])
        _defer(result, check)
        return check
    if judgement.error:
        check.passed, check.note = False, "the judge failed (see error below): no score is not a pass"
    elif judgement.value is None:
        check.passed, check.note = False, f"not scored: {judgement.details.get('skipped', 'no value')}"
    else:
        check.passed = judgement.value >= threshold
    result.checks.append(check)
    return check


def _run_checks(result: RagResult, assertion: str, thresholds: dict[str, float], *,
                scale: tuple[float, float] | None = None, not_run: list[Check] | None = None) -> list[Check]:
    """Each threshold's check, then `not_run` (the checks the assertion left out, each saying why): all of them are
    recorded on the result and returned, and a failure's message lists every one."""
    __tracebackhide__ = True
    result.ensure(*thresholds)
    checks = [_score_check(result, assertion, judge, t, scale) for judge, t in thresholds.items()]
    for check in not_run or []:
        result.checks.append(check)
    failed = [c for c in checks if c.passed is False]
    if failed:
        headline = "; ".join(
            f"{c.metric} {_figure(c, c.value)} is below {c.on_scale(c.threshold):g}"  # type: ignore[arg-type]
            if c.value is not None else f"{c.judge} {c.note.split(':')[0]}" for c in failed)
        _fail(result, assertion, headline, checks + (not_run or []), list(thresholds))
    return checks + (not_run or [])


# -- the helpers ---------------------------------------------------------------------------
def assert_grounded(result: RagResult, min: float | None = None) -> list[Check]:  # noqa: A002 - reads well
    """The answer is faithful to the passages it was given: RL_F (RAGAS faithfulness) >= `min`. Returns the check."""
    __tracebackhide__ = True
    return _run_checks(result, "assert_grounded", {"rl_f": _threshold(result, "rl_f", min)})


def assert_matches_reference(result: RagResult, rb_alg: float | bool | None = None,
                             rb_llm: float | bool | None = None) -> list[Check]:
    """The answer matches the reference answer: RB_alg >= `rb_alg` and RB_llm >= `rb_llm`.

    Thresholds, checks not run and what is returned are as docs/pytest-plugin.md says; a threshold given for RB_llm
    requires it (the test skips without a judge model).
    """
    __tracebackhide__ = True
    if not result.reference:
        raise AssertionError("assert_matches_reference: this turn has no reference answer; "
                             "pass reference= to rag_judge.evaluate()")
    assertion = "assert_matches_reference"
    thresholds: dict[str, float] = {}
    not_run: list[Check] = []
    for judge, given in (("rb_alg", rb_alg), ("rb_llm", rb_llm)):
        metric = "RB_agg" if judge == "rb_alg" else "RB_llm"
        if given is False:
            not_run.append(Check(assertion, judge, metric, None, None, None, f"not checked: {judge}=False"))
        elif judge == "rb_llm" and given is None and not _llm_available(result):
            why = result.owner.settings.llm_unavailable if result.owner is not None else None
            not_run.append(Check(assertion, judge, metric, None, None, None,
                                 f"not checked: {why or 'no judge model configured'}"))
        elif given is True or given is None:
            thresholds[judge] = _threshold(result, judge, None)
        else:
            thresholds[judge] = float(given)
    if not thresholds:
        raise AssertionError(f"{assertion}: both checks are left out (rb_alg=False, rb_llm=False): nothing to check")
    return _run_checks(result, assertion, thresholds, not_run=not_run)


def assert_retrieves(result: RagResult, k: int | None = None, min_recall: float | None = None) -> list[Check]:
    """The expected passages are among the first `k` retrieved: Recall@k >= `min_recall`. Returns the check."""
    __tracebackhide__ = True
    k = result.k if k is None else int(k)
    threshold = _threshold(result, RECALL, min_recall)
    if not result.expected_passage_ids:
        if result.answerability in NOTHING_TO_RETRIEVE:  # e.g. an unanswerable dataset turn
            check = Check("assert_retrieves", RECALL, f"Recall@{k}", None, threshold, None,
                          f"not applicable: a {result.answerability} turn has no passages to retrieve")
            result.checks.append(check)
            return [check]
        raise AssertionError("assert_retrieves: no expected passage ids; pass expected_passage_ids= to "
                             "rag_judge.evaluate()")
    # Recall at the evaluation's k is the `recall` judgement; another k is reported as its own (`recall@1`).
    name = RECALL if k == result.k else f"{RECALL}@{k}"
    judgement = recall_result(result.expected_passage_ids, result.retrieved_ids, k, judge=name)
    result.judgements[name] = judgement
    check = Check("assert_retrieves", name, judgement.metric, judgement.value, threshold,
                  judgement.value is not None and judgement.value >= threshold)
    result.checks.append(check)
    if not check.passed:
        _fail(result, "assert_retrieves", f"{judgement.metric} {judgement.value:.3f} is below {threshold:g}",
              [check], [name])
    return [check]


def assert_idk_correct(result: RagResult, judge: str | None = None) -> list[Check]:
    """The app says "I don't know" exactly when it should: declines an unanswerable question, answers
    an answerable (or partially answerable) one. Uses the LLM `idk` judge when a judge model is
    configured, else the offline `idk_lexical` judge; `judge=` forces one. Returns the check."""
    __tracebackhide__ = True
    from ragjudge.judges.conditioning import answerability_correct

    assertion = "assert_idk_correct"
    label = result.answerability
    if label is None:
        raise AssertionError(f"{assertion}: no expectation; pass expected_answerable=True/False (or "
                             "answerability=) to rag_judge.evaluate()")
    name = judge or ("idk" if _llm_available(result) else "idk_lexical")
    result.ensure(name)
    judgement = result.judgements[name]
    check = Check(assertion, name, judgement.metric, judgement.value, None, None)
    if label in NO_ANSWERABILITY_EXPECTATION:
        check.note = f"not applicable: a {label} turn has no right or wrong \"I don't know\""
        result.checks.append(check)
        return [check]
    if judgement.details.get("llm_unavailable"):
        check.note = str(judgement.details["skipped"])
        _defer(result, check)
        return [check]
    if judge is None and name == "idk_lexical":
        check.note = "offline stand-in for the LLM idk judge (no judge model configured)"
    if judgement.error or judgement.value is None:
        check.passed = False
        result.checks.append(check)
        _fail(result, assertion, f"the {name} judge gave no verdict", [check], [name])
    correct = answerability_correct(judgement.value, label)
    check.passed = bool(correct)
    result.checks.append(check)
    if not check.passed:
        verdict = judgement.label or f"{judgement.value:g}"
        if label == "UNANSWERABLE":
            headline = f"the question is UNANSWERABLE but the app answered ({name}: {verdict!r})"
        else:
            headline = f"the question is {label} but the app declined to answer ({name}: {verdict!r})"
        _fail(result, assertion, headline, [check], [name])
    return [check]


def assert_criterion(result: RagResult, criterion: Criterion, min: float | None = None) -> list[Check]:  # noqa: A002
    """The answer meets a criterion in one line (`ragjudge.criterion(...)`, judged G-Eval's way): its score, on the
    criterion's own scale, is at least `min` (default: the scale's middle, 3 on 1-5); a failure shows the score and
    `min` on that scale. Returns the check."""
    __tracebackhide__ = True
    low, high = criterion.scale
    wanted = (low + high) / 2 if min is None else float(min)
    if not low <= wanted <= high:
        raise ValueError(f"assert_criterion: min must be on the criterion's scale, {low} to {high}, got {min}")
    name = result.owner.evaluator.name_of(criterion) if result.owner is not None else criterion.name
    return _run_checks(result, "assert_criterion", {name: (wanted - low) / (high - low)}, scale=(low, high))
