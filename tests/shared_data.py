"""Where the shared development data is (`mtrag/`, `mtrag-un/`, `sentret/`): one locator for every test.

- `RAGJUDGE_SHARED_DATA=/path/to/shared/data` (the folder holding `mtrag/`, `mtrag-un/`, `sentret/`): if set,
  only that folder is used; a path that does not exist means "no shared data" (so that
  `RAGJUDGE_SHARED_DATA=/nonexistent python -m pytest` shows what a fresh clone sees).
- Otherwise the first `shared/data` folder found walking up from the repository's parent: `../shared/data`,
  `../../shared/data`, ... (CI and the development machines have it at `../shared/data`).

Tests that reproduce a figure measured on the real data use it and skip, saying what is missing and how to
provide it, when it is absent; tests of a format or a mechanism use our own fixtures (tests/fixtures/) and always
run. Usage:

    from shared_data import SHARED_DATA, need_shared, requires_shared

    @requires_shared("mtrag", "runs", "retrieval/clapnq/qrels.tsv")  # skipped, saying what is missing and how
    def test_figures() -> None:                                       # to provide it, unless all of it is there
        runs = SHARED_DATA / "mtrag" / "runs"

    @pytest.fixture
    def shared_mtrag() -> Path:
        return need_shared("mtrag")  # SHARED_DATA/mtrag, or the same skip
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV = "RAGJUDGE_SHARED_DATA"
WHAT = {
    "mtrag": "the MTRAG development data",
    "mtrag-un": "the MTRAG-UN development data",
    "sentret": "the sentence-retrieval splits",
}


def locate(setting: str | None = None, repo: Path = REPO) -> Path | None:
    """The shared data folder, or None: `setting` (default: $RAGJUDGE_SHARED_DATA) strictly if given and not
    empty, else the first `shared/data` folder above `repo`."""
    if setting is None:
        setting = os.environ.get(ENV, "")
    if setting.strip():
        path = Path(setting).expanduser().resolve()
        return path if path.is_dir() else None
    for parent in repo.parents:
        candidate = parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    return None


FOUND = locate()
"""The shared data folder found for this session, or None."""
SHARED_DATA = FOUND or (Path(os.environ[ENV]).expanduser() if os.environ.get(ENV, "").strip()
                        else REPO.parent / "shared" / "data")
"""Always a path: the folder found, else where it was looked for first (whose subfolders then do not exist)."""


def missing_reason(dataset: str, *files: str) -> str | None:
    """None if SHARED_DATA/dataset and each SHARED_DATA/dataset/file exist, else what is missing and what to do
    about it (a skip reason)."""
    missing = next((rel for rel in (dataset, *(f"{dataset}/{f}" for f in files)) if not (SHARED_DATA / rel).exists()),
                   None)
    if missing is None:
        return None
    what = f" ({WHAT[dataset]})" if dataset in WHAT else ""
    setting = os.environ.get(ENV, "").strip()
    if FOUND is None and setting:
        return (f"needs shared/data/{missing}{what}: RAGJUDGE_SHARED_DATA={setting} is not a folder; point it at "
                f"the shared data folder (the one holding mtrag/, mtrag-un/, sentret/) or unset it to look in "
                f"../shared/data")
    if FOUND is None:
        return (f"needs ../shared/data/{missing}{what}: no shared/data folder above {REPO}; put it at "
                f"../shared/data or set RAGJUDGE_SHARED_DATA=/path/to/shared/data")
    via = f"RAGJUDGE_SHARED_DATA={setting}" if setting else "the first shared/data above the repository"
    return (f"needs shared/data/{missing}{what}: not in {FOUND} ({via}); complete that copy or set "
            f"RAGJUDGE_SHARED_DATA=/path/to/shared/data")


def need_shared(dataset: str, *files: str) -> Path:
    """SHARED_DATA/dataset, after checking that it and each of `files` (paths inside it) exist; otherwise skip
    with `missing_reason`. For fixtures (a skip there is reported at the test); in a test body, use the
    `requires_shared` marker, so that the report names the test and not this line."""
    reason = missing_reason(dataset, *files)
    if reason is not None:
        pytest.skip(reason)
    return SHARED_DATA / dataset


def requires_shared(dataset: str, *files: str) -> pytest.MarkDecorator:
    """`need_shared` as a skipif marker, for a test (or a module, `pytestmark = requires_shared(...)`)."""
    reason = missing_reason(dataset, *files)
    return pytest.mark.skipif(reason is not None, reason=reason or "")
