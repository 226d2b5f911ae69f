"""Shared helpers for the DialSim tests: copies of the synthetic show in every published layout."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path
from typing import Any

from conftest import REPO

MINI_DIR = REPO / "examples" / "dialsim-mini"
SHOWS_FILE = MINI_DIR / "dialsim_shows.json"


def nested(name: str = "mini_dialsim.json") -> dict[str, Any]:
    return json.loads((MINI_DIR / name).read_text())


def intify(value: Any) -> Any:
    """JSON's text keys back to numbers where the published pickles have numbers (scenes, list indices)."""
    if isinstance(value, dict):
        return {(int(k) if isinstance(k, str) and k.isdigit() else k): intify(v) for k, v in value.items()}
    if isinstance(value, list):
        return [intify(v) for v in value]
    return value


def as_pickles(folder: Path, oracle: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(SHOWS_FILE, folder)
    data = nested()
    for episode in data.values():  # scenes keyed by number; easy-question ids stay as the JSON has them
        for scene in episode.values():
            scene["hard_q"] = {t: list(qs) for t, qs in scene["hard_q"].items()}
    (folder / "mini_dialsim.pickle").write_bytes(pickle.dumps({e: {int(s): v for s, v in sc.items()}
                                                              for e, sc in data.items()}))
    if oracle:
        for kind in ("tkg", "fan"):
            (folder / f"mini_oracle_{kind}.pickle").write_bytes(pickle.dumps(intify(nested(f"mini_oracle_{kind}.json"))))
    return folder


def as_parquet(folder: Path, oracle: bool = True) -> Path:
    """The Hugging Face layout: dialsim-mini/data/train-00000-of-00001.parquet (+ oracle pickles if asked)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ragjudge.bench.dialsim.parquet_layout import nested_to_hf_rows

    target = folder / "dialsim-mini" / "data"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(SHOWS_FILE, folder)
    pq.write_table(pa.Table.from_pylist(nested_to_hf_rows(nested())), target / "train-00000-of-00001.parquet")
    if oracle:
        for kind in ("tkg", "fan"):
            (folder / "dialsim-mini" / f"mini_oracle_{kind}.pickle").write_bytes(
                pickle.dumps(intify(nested(f"mini_oracle_{kind}.json"))))
    return folder
