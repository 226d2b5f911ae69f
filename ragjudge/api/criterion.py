"""`ragjudge.criterion`: a judge from one sentence (G-Eval's way; see `ragjudge.judges.criterion`)."""

from __future__ import annotations

from pydantic import ValidationError

from ragjudge.errors import UsageError
from ragjudge.judges.criterion import Criterion


def criterion(text: str, *, name: str, scale: tuple[int, int] = (1, 5), steps: str | None = None) -> Criterion:
    """A criterion judge: `ragjudge.criterion("Does the answer cite the policy number?", name="cites_policy")`, used
    where a judge name goes (`evaluate(metrics=[...])`, `rag_judge.evaluate(judges=[...])` with `assert_criterion`, or
    `--criterion NAME="..."`: docs/your-rag-app.md). Its metric is `name`, a score in [0, 1] (the scale mapped onto it).
    `steps`: evaluation steps of your own (default: written once by the judge model)."""
    try:
        return Criterion(name=name, criterion=text, scale=scale, steps=steps)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "scale"
        where = {"criterion": "text"}.get(where, where)
        raise UsageError(f"criterion {where}: {err['msg'].removeprefix('Value error, ')}") from None
