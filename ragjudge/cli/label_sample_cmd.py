"""`ragjudge label-sample RUN --n 50 --seed 0`: which samples a person should label (a seeded uniform draw)."""

from pathlib import Path
from typing import Annotated

import typer


def label_sample_command(
    run: Annotated[Path, typer.Argument(metavar="RUN", help="A run folder (`ragjudge eval --out`) or results file (`ragjudge judge "
                                        "--out`).")],
    n: Annotated[int, typer.Option("--n", min=1, help="How many samples to draw (all when the run has fewer).")] = 50,
    seed: Annotated[int, typer.Option("--seed", help="Random seed: the same seed draws the same samples.")] = 0,
    strata: Annotated[str | None, typer.Option("--strata", metavar="<field>", help="Draw within each value of this "
                                               "label or metadata field, in proportion to its size.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Where to write the draw (default: label-sample.json in "
                                             "the run folder, or NAME.label-sample.json beside a results file).")
                   ] = None,
) -> None:
    """Draw the samples to label, uniformly at random: what `ragjudge report RUN --to-label FILE` shows first, and
    what makes the PPI++ intervals of `ragjudge correlate RUN --labels` valid."""
    from ragjudge.api.trust import label_sample

    drawn = label_sample(run, n=n, seed=seed, strata=strata, out=out)
    typer.echo(f"{len(drawn.ids)} samples to label (seed {seed}{', strata ' + strata if strata else ''}): "
               f"{drawn.path}", err=True)
    for sample_id in drawn.ids:
        print(sample_id)
