"""`ragjudge cache info` / `ragjudge cache clear`: what the cache folder holds, and making room (docs/cache.md).
"""

import json
import re
import shutil
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from ragjudge.cli import common
from ragjudge.errors import InputError, UsageError

app = typer.Typer(help="Show or clear ragjudge's cache: embeddings, indexes, ONNX exports, LLM responses.",
                  no_args_is_help=True)

LLM_FILE = "llm-responses.sqlite"
INDEXES = "indexes"
LEGACY_EMBEDDINGS = "embeddings"
"""RB_alg's one-file-per-text embeddings of ragjudge before the store (read no more; cleared by `cache clear`)."""
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}

CacheDirOpt = Annotated[str | None, typer.Option("--cache-dir", help="The cache folder (default: $RAGJUDGE_CACHE_DIR "
                                                 "or ~/.cache/ragjudge).")]


def parse_age(text: str) -> float:
    """'30d', '12h', '90m', '45s', '2w' -> seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*", text)
    if not match or float(match.group(1)) <= 0:
        raise UsageError(f"--older-than must be a positive number and a unit s, m, h, d or w (e.g. 30d, 12h), "
                         f"got {text!r}")
    return float(match.group(1)) * UNITS[match.group(2)]


def folder_of(cache_dir: str | None) -> Path:
    """The cache folder: it may not exist yet (an empty cache), but a file there is a mistake, not an empty cache."""
    from ragjudge.llm.cache import default_cache_dir

    folder = Path(cache_dir) if cache_dir else default_cache_dir()
    if folder.exists() and not folder.is_dir():
        raise InputError("is a file, expected the cache folder", file=str(folder),
                         field="--cache-dir" if cache_dir else "RAGJUDGE_CACHE_DIR")
    return folder


def _size(path: Path) -> int:
    """Bytes under `path`; a file removed while counting (a `cache clear` running beside) counts as gone."""
    try:
        if path.is_file():
            return path.stat().st_size
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0
    except FileNotFoundError:
        return 0


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def _when(stamp: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp)) if stamp else "-"


def gather(folder: Path) -> dict[str, Any]:
    from ragjudge.embeddings.store import EmbeddingStore

    store = EmbeddingStore(folder, read_only=True)  # looking changes nothing, and warns of nothing
    info = store.info()
    store.close()
    from ragjudge.embeddings.onnx_export import onnx_root

    llm = folder / LLM_FILE
    indexes = folder / INDEXES
    exports = onnx_root(folder)
    return {
        "folder": str(folder),
        "embeddings": {"path": info.path, "bytes": info.file_bytes,
                       "spaces": [{"label": s.label, "entries": s.entries, "bytes": s.bytes,
                                   "last_used": s.last_used, "encoder": s.key.get("encoder"), "entry": s.key.get("entry")}
                                  for s in info.spaces]},
        "indexes": {"path": str(indexes), "bytes": _size(indexes),
                    "count": sum(1 for p in indexes.iterdir() if p.is_dir()) if indexes.is_dir() else 0},
        "onnx_exports": _exports(exports),
        "llm_responses": {"path": str(llm), "bytes": _size(llm) + _size(llm.with_name(LLM_FILE + "-wal"))},
        "legacy_embeddings": {"path": str(folder / LEGACY_EMBEDDINGS), "bytes": _size(folder / LEGACY_EMBEDDINGS)},
    }


def _exports(folder: Path) -> dict[str, Any]:
    """The ONNX exports' folder, models and bytes; one this user cannot read (another's $RAGJUDGE_ONNX_DIR) is
    reported as such, not an error: looking at a cache never fails on a folder it does not need."""
    try:
        return {"path": str(folder), "bytes": _size(folder),
                "count": sum(1 for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else 0}
    except OSError as exc:
        return {"path": str(folder), "bytes": 0, "count": 0, "unreadable": exc.strerror or str(exc)}


@app.command("info")
def info_command(cache_dir: CacheDirOpt = None, fmt: common.FormatOpt = "table") -> None:
    """Where the cache is and what it holds: embedding spaces (model, entries, size, last use), indexes, LLM
    responses."""
    common.check_format(fmt)
    facts = gather(folder_of(cache_dir))
    if fmt == "json":
        typer.echo(json.dumps(facts, indent=2))
        return
    emb = facts["embeddings"]
    lines = [f"cache folder: {facts['folder']}",
             f"embedding store: {emb['path']} ({_mb(emb['bytes'])}, {len(emb['spaces'])} space(s))"]
    for s in emb["spaces"]:
        lines.append(f"  {s['label']} [{s['encoder']}, {s['entry']}]: {s['entries']:,} texts, {_mb(s['bytes'])}, "
                     f"last used {_when(s['last_used'])}")
    lines.append(f"indexes: {facts['indexes']['path']} ({facts['indexes']['count']} index(es), "
                 f"{_mb(facts['indexes']['bytes'])})")
    exports = facts["onnx_exports"]
    lines.append(f"ONNX exports: {exports['path']} (" + (f"cannot read: {exports['unreadable']})" if "unreadable" in exports
                 else f"{exports['count']} model(s), {_mb(exports['bytes'])}; made again from the local weights in "
                 "seconds)"))
    lines.append(f"LLM responses: {facts['llm_responses']['path']} ({_mb(facts['llm_responses']['bytes'])}; paid "
                 f"for: `cache clear` keeps them unless given --llm-responses)")
    if facts["legacy_embeddings"]["bytes"]:
        lines.append(f"old RB_alg embedding files: {facts['legacy_embeddings']['path']} "
                     f"({_mb(facts['legacy_embeddings']['bytes'])}; no longer read: `cache clear` removes them)")
    typer.echo("\n".join(lines))


@app.command("clear")
def clear_command(
    cache_dir: CacheDirOpt = None,
    older_than: Annotated[str | None, typer.Option("--older-than", help="Only what was not used for this long "
                                                   "(30d, 12h, 90m...): embeddings by last use, indexes by age.")] = None,
    llm_responses: Annotated[bool, typer.Option("--llm-responses", help="Also delete the LLM responses (paid for: "
                                                "a rerun pays again).")] = False,
) -> None:
    """Delete embeddings, indexes and ONNX exports (and with --llm-responses the LLM responses too)."""
    from ragjudge.embeddings.store import EmbeddingStore

    age = parse_age(older_than) if older_than is not None else None
    if llm_responses and age is not None:
        raise UsageError("--llm-responses clears the whole response cache (responses carry no dates): drop "
                         "--older-than, or clear the responses apart")
    folder = folder_of(cache_dir)
    store = EmbeddingStore(folder)
    removed = store.clear(age)
    store.close()
    said = [f"embeddings: {removed:,} text(s) removed" + (f" (not used for {older_than})" if age else "")]
    from ragjudge.embeddings.onnx_export import onnx_root

    cutoff = time.time() - age if age is not None else None
    said.append(f"indexes: {_remove_entries(folder / INDEXES, cutoff)} removed")
    said.append(f"ONNX exports: {_remove_entries(onnx_root(folder), cutoff)} removed")
    legacy = folder / LEGACY_EMBEDDINGS
    if legacy.is_dir() and age is None:
        shutil.rmtree(legacy, onerror=_gone_is_fine)
        said.append("old RB_alg embedding files: removed")
    if llm_responses:
        for name in (LLM_FILE, LLM_FILE + "-wal", LLM_FILE + "-shm"):
            (folder / name).unlink(missing_ok=True)
        said.append("LLM responses: removed")
    typer.echo(f"{folder}: " + "; ".join(said))


def _remove_entries(parent: Path, cutoff: float | None) -> int:
    """Delete what `parent` holds (older than `cutoff` when given): how many entries went."""
    gone = 0
    if parent.is_dir():
        for entry in parent.iterdir():
            try:
                if cutoff is None or entry.stat().st_mtime < cutoff:
                    shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
                    gone += 1
            except FileNotFoundError:  # removed by a clear running beside this one
                continue
    return gone


def _gone_is_fine(function: Any, path: str, exc_info: Any) -> None:
    """rmtree's handler: a file another clear removed first is fine; anything else (read-only) is raised."""
    if not isinstance(exc_info[1], FileNotFoundError):
        raise exc_info[1]
