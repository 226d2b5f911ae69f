"""The one door to files: every reader opens its input here and every writer checks its output here, so a
missing file, a folder given for a file (or the reverse), bytes that are not UTF-8, an oversized line or an
OS fault is one line naming the path (and line and byte offset), never a traceback.

Text is read as bytes and decoded line by line, so a bad byte is located exactly and a huge line costs about its own
size, not the whole file's. Every reader reads a `.gz` file decompressed (offsets are then in the decompressed text).
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any

from ragjudge.errors import EnvironmentFault, InputError

DEFAULT_MAX_LINE_MB = 256
"""A line longer than this is refused (one line, exit 2) before it is decoded or parsed; the
`RAGJUDGE_MAX_LINE_MB` environment variable changes it."""

_BOM = b"\xef\xbb\xbf"


def max_line_bytes() -> int:
    raw = os.environ.get("RAGJUDGE_MAX_LINE_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MAX_LINE_MB
    except ValueError:
        mb = DEFAULT_MAX_LINE_MB
    return max(1, int(mb * 1024 * 1024))


# ------------------------------------------------------------------------------------------- inputs

class InputLog:
    """The files a run reads (run.json's `inputs`): every file opened through this module while the log is on,
    but for those under `exclude` (the run's own output, the caches)."""

    def __init__(self, exclude: Sequence[str | Path] = ()):
        self.exclude = [Path(p).resolve() for p in exclude]
        self.paths: dict[Path, None] = {}

    def add(self, path: Path) -> None:
        resolved = path.resolve()
        if not any(resolved.is_relative_to(folder) for folder in self.exclude):
            self.paths.setdefault(resolved, None)

    def entries(self) -> list[dict[str, str]]:
        """[{path, sha256}] in the order first read; a file gone since is listed without its hash."""
        out = []
        for path in self.paths:
            try:
                with path.open("rb") as fh:
                    out.append({"path": str(path), "sha256": hashlib.file_digest(fh, "sha256").hexdigest()})
            except OSError:
                out.append({"path": str(path), "sha256": None})
        return out


_INPUT_LOG: ContextVar[InputLog | None] = ContextVar("ragjudge_input_log", default=None)


@contextmanager
def recording_inputs(exclude: Sequence[str | Path] = ()) -> Iterator[InputLog]:
    """Within the block (and the tasks and threads started from it with their context), note every input file."""
    log = InputLog(exclude)
    token = _INPUT_LOG.set(log)
    try:
        yield log
    finally:
        _INPUT_LOG.reset(token)


def input_file(path: str | Path, what: str = "file") -> Path:
    """`path` as an existing regular file; otherwise InputError ("file not found", "is a folder")."""
    path = Path(path)
    try:
        if path.is_dir():
            raise InputError(f"is a folder, expected {_article(what)}", file=str(path))
        if not path.exists():
            raise InputError("file not found", file=str(path))
    except OSError as exc:  # a path too long, a loop of links, a folder we may not look into
        raise EnvironmentFault.from_os_error(exc, path=str(path)) from None
    return path


def input_folder(path: str | Path, what: str = "folder") -> Path:
    """`path` as an existing folder; a file or nothing there is an InputError."""
    path = Path(path)
    if path.is_file():
        raise InputError(f"is a file, expected {_article(what)}", file=str(path))
    if not path.is_dir():
        raise InputError("folder not found", file=str(path))
    return path


def open_binary(path: str | Path, what: str = "file") -> IO[bytes]:
    """The file's bytes, decompressed when its name ends in `.gz`."""
    path = input_file(path, what)
    if (log := _INPUT_LOG.get()) is not None:
        log.add(path)
    try:
        raw = path.open("rb")
    except OSError as exc:
        raise EnvironmentFault.from_os_error(exc, action="read", path=str(path)) from None
    return _Gunzipped(path, raw) if is_gzip(path) else raw


def is_gzip(path: str | Path) -> bool:
    return Path(path).name.lower().endswith(".gz")


def without_gz(path: str | Path) -> Path:
    """`rows.csv.gz` -> `rows.csv`: the name whose suffix says the format of what is inside."""
    path = Path(path)
    return path.with_name(path.name[:-3]) if is_gzip(path) else path


class _Gunzipped(gzip.GzipFile):
    """A `.gz` file's decompressed bytes. A damaged or cut-off archive is an InputError naming the file, not an OS
    fault (gzip's BadGzipFile is an OSError) or an EOFError."""

    def __init__(self, path: Path, raw: IO[bytes]):
        super().__init__(filename=str(path), mode="rb", fileobj=raw)
        self._path, self._raw = path, raw

    def read(self, size: int | None = -1) -> bytes:
        with self._damaged():
            return super().read(size)

    def read1(self, size: int = -1) -> bytes:
        with self._damaged():
            return super().read1(size)

    def readline(self, size: int | None = -1) -> bytes:
        with self._damaged():
            return super().readline(size)

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()

    @contextmanager
    def _damaged(self) -> Iterator[None]:
        try:
            yield
        except gzip.BadGzipFile as exc:
            raise InputError(f"not a gzip file ({exc}): a name ending in .gz is read decompressed",
                             file=str(self._path)) from None
        except (EOFError, zlib.error) as exc:
            raise InputError(f"a damaged or cut-off gzip file ({exc})", file=str(self._path)) from None


def iter_lines(path: str | Path, what: str = "file") -> Iterator[tuple[int, str, bool]]:
    """(line number, text, ends with a newline) for every line, decoded as UTF-8 (a leading BOM is dropped), streamed:
    memory is bounded by the longest line, which may not exceed `max_line_bytes()`."""
    limit = max_line_bytes()
    offset = 0
    with open_binary(path, what) as fh:
        number = 0
        while True:
            try:
                raw = fh.readline(limit + 1)
            except OSError as exc:
                raise EnvironmentFault.from_os_error(exc, action="read", path=str(path)) from None
            if not raw:
                return
            number += 1
            if len(raw) > limit and not raw.endswith(b"\n"):
                raise InputError(f"line longer than {limit // (1024 * 1024)} MB (set RAGJUDGE_MAX_LINE_MB to "
                                 "allow more)", file=str(path), line=number)
            if number == 1 and raw.startswith(_BOM):
                raw, offset = raw[len(_BOM):], len(_BOM)
            start, complete, held = offset, raw.endswith(b"\n"), [raw]
            offset += len(raw)
            raw = b""  # the bytes are freed as soon as they are decoded: a huge line is held once, not twice
            yield number, decode_line(held.pop(), path=path, line=number, offset=start), complete


def decode_line(raw: bytes, *, path: str | Path, line: int | None, offset: int) -> str:
    """`raw` as UTF-8; a bad byte is an InputError naming the line and the byte's offset in the file."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start]
        raise InputError(f"not UTF-8 text: byte 0x{bad:02x} at byte offset {offset + exc.start} (save the file as "
                         "UTF-8)", file=str(path), line=line) from None


def read_text(path: str | Path, what: str = "file") -> str:
    """A whole (small) text file: JSON documents, YAML specs. Decoding errors name line and byte offset."""
    fh = open_binary(path, what)
    try:
        with fh:
            data = fh.read()
    except OSError as exc:
        raise EnvironmentFault.from_os_error(exc, action="read", path=str(path)) from None
    return decode_text(data, path=path)


def decode_text(data: bytes, *, path: str | Path) -> str:
    """A whole file's bytes as UTF-8 (a leading BOM dropped); a bad byte is an InputError naming its line and
    its byte offset in the file."""
    start = len(_BOM) if data.startswith(_BOM) else 0
    try:
        return data[start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = start + exc.start
        raise InputError(f"not UTF-8 text: byte 0x{data[at]:02x} at byte offset {at} (save the file as UTF-8)",
                         file=str(path), line=data.count(b"\n", 0, at) + 1) from None


_CSV_LIMIT = threading.Lock()


@contextmanager
def csv_field_limit(limit: int) -> Iterator[None]:
    """The csv module's field size limit (131,072 characters by default: a long answer would be refused) set to
    `limit` for the block, then put back. The limit is the module's global state, so the block holds a lock: a
    reader in another thread never sees it changed under it."""
    import csv

    with _CSV_LIMIT:
        before = csv.field_size_limit(limit)
        try:
            yield
        finally:
            csv.field_size_limit(before)


def csv_rows(path: str | Path, what: str = "file", *, delimiter: str = ",", header: bool = False,
             quoting: int | None = None) -> Iterator[tuple[int, Any]]:
    """(line number, row) of a CSV/TSV file, streamed through `iter_lines`; rows are lists, or dicts with
    `header=True`. A field may be as long as a line may (`max_line_bytes`); a longer one, or a row the csv module
    cannot read, is an InputError."""
    import csv

    current, limit = [0], min(max_line_bytes(), 2**31 - 1)  # the csv module keeps its limit in a C long

    def lines() -> Iterator[str]:
        for number, text, _ in iter_lines(path, what):
            current[0] = number
            yield text

    options: dict[str, Any] = {"delimiter": delimiter}
    if quoting is not None:
        options["quoting"] = quoting
    reader: Any = csv.DictReader(lines(), **options) if header else csv.reader(lines(), **options)
    kind = "TSV" if delimiter == "\t" else "CSV"
    while True:
        try:
            with csv_field_limit(limit):  # only around the read: the generator may pause between rows
                row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if "field larger than field limit" in str(exc):
                raise InputError(f"a {kind} field longer than {limit // (1024 * 1024)} MB (set RAGJUDGE_MAX_LINE_MB "
                                 "to allow more)", file=str(path), line=max(1, current[0])) from None
            raise InputError(f"not a {kind} line ({exc})", file=str(path), line=max(1, current[0])) from None
        yield current[0], row


def first_line(path: str | Path, what: str = "file") -> str | None:
    """The first non-blank line (without its newline), or None for an empty file."""
    for _, text, _ in iter_lines(path, what):
        if text.strip():
            return text.rstrip("\r\n")
    return None


# ------------------------------------------------------------------------------------------- outputs

def output_file(path: str | Path, what: str = "output file") -> Path:
    """Check, before any work, that `path` can be written as a file: not a folder, no file in the way of
    its folder, and the nearest existing folder writable."""
    path = Path(path)
    if path.is_dir():
        raise InputError(f"is a folder, expected {_article(what)} to write", file=str(path))
    _check_parents(path.parent, path)
    return path


def output_folder(path: str | Path, what: str = "output folder") -> Path:
    """Check, before any work, that `path` is (or can become) a writable folder."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise InputError(f"is a file, expected {_article(what)}", file=str(path))
    _check_parents(path, path)
    return path


@contextmanager
def writing(path: str | Path, action: str = "write") -> Iterator[None]:
    """Around a write: an OS fault (full disk, read-only folder, a folder removed under us) becomes one
    EnvironmentFault naming `path`, even when the OS error itself names no file (write, flush, fsync)."""
    try:
        yield
    except (IsADirectoryError, NotADirectoryError) as exc:  # a usage mistake (exit 2), reported as such
        raise InputError(f"cannot {action}: {exc.strerror}", file=str(path)) from None
    except OSError as exc:
        if isinstance(exc, (BrokenPipeError, ConnectionError, TimeoutError)):
            raise
        raise EnvironmentFault.from_os_error(exc, action=action, path=str(path)) from None


@contextmanager
def atomic_output(path: str | Path, action: str = "write") -> Iterator[Path]:
    """A temporary sibling of `path` to write; renamed over `path` when the block ends well, removed when it
    does not. A reader never sees half a file, a failed write leaves the previous file whole, and an OS fault
    is one EnvironmentFault naming `path`. The sibling keeps the suffix (a plotting library picks the format
    from it)."""
    path = Path(path)
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp{path.suffix}")
    with writing(path, action):
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            yield tmp
            os.replace(tmp, path)
        finally:
            with suppress(OSError):
                tmp.unlink(missing_ok=True)


def _check_parents(folder: Path, target: Path) -> None:
    current = folder
    while True:
        if current.exists():
            if not current.is_dir():
                raise InputError(f"is a file, so {target} cannot be created", file=str(current))
            if not _writable(current):
                reason = "read-only file system (EROFS)" if _read_only_mount(current) else "permission denied (EACCES)"
                raise EnvironmentFault(f"cannot write: {reason} in folder {current}", path=str(target))
            return
        if current.parent == current:
            return
        current = current.parent


def _read_only_mount(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _writable(folder: Path) -> bool:
    """As the process's effective user sees it (the real user may differ under sudo or setuid)."""
    if os.access in os.supports_effective_ids:
        return os.access(folder, os.W_OK | os.X_OK, effective_ids=True)
    return os.access(folder, os.W_OK | os.X_OK)


def _article(what: str) -> str:
    return what if what.split(" ")[0] in ("a", "an", "the") else ("an " if what[:1].lower() in "aeiou" else "a ") + what
