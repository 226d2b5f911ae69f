"""One content-addressed store for every embedding ragjudge computes: a text is encoded once, ever.

Every encoder goes through it: BERTScore's token states (RB_alg), sentence-transformers and embeddings-API
vectors (dense retrieval, CXMArena's KB, DialSim's dense memory, sentence retrieval). One SQLite file,
`<cache>/embeddings.sqlite`; an entry is keyed by its *space* (everything that changes the vectors: model
files, layer, pooling, normalisation, library versions) and the SHA-256 of the text. Writes are batched, one
transaction per encoded batch, so an encode killed halfway resumes where it stopped. Entries carry a CRC32:
a damaged entry is recomputed, never returned. A file that is not a ragjudge store (or is damaged as a whole)
is an error naming the file, never wrong vectors. A folder that cannot be written turns writing off with
one warning (what is stored can still be read).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import struct
import threading
import time
import warnings
import weakref
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragjudge.errors import RagjudgeWarning, UsageError

STORE_FILE = "embeddings.sqlite"
APPLICATION_ID = 0x524A4553  # "RJES": set in the file's header, so a foreign SQLite file is recognised
FORMAT = 1
_MAGIC = b"RJE1"
_HEADER = struct.Struct("<4sIII")  # magic, rows (1 for a pooled vector, tokens for token states), dim, crc32
_MAX_VARS = 500
_INSERT_BLOCK = ("WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?) "
                 "INSERT OR REPLACE INTO entries (space, hash, value, used) "
                 "SELECT ?, substr(?, i * 32 + 1, 32), substr(?, i * ? + 1, ?), ? FROM k")
"""Entry i of a block: bytes [32 i, 32 i + 32) of the texts' SHA-256 keys, [size i, size i + size) of the entries."""
PAGE_SIZE = 16384
"""Bytes per database page of a new store: an entry is a vector of 1.5 KB (MiniLM) to 4 KB, and on SQLite's default 4 KB
pages each insert split pages twice as often: 8.9 us an entry against 4.9 (issue 44, the indexing pipeline's host
side, where the store was the largest part after the tokenizer)."""


class EmbeddingStoreError(UsageError):
    """The store file is not a ragjudge embedding store, or is damaged: nothing is read from it."""


class ForeignStoreError(EmbeddingStoreError):
    """The file is another program's SQLite database: never read, never deleted."""


SQLITE_HEADER = b"SQLite format 3\x00"


def file_owner(path: Path) -> str:
    """Whose file `path` is, from its first bytes alone (nothing is opened as a database): `ragjudge` (a store,
    perhaps damaged past its header, or an empty file a store was being created in), `sqlite` (another program's
    database) or `other` (not a database at all: a text file, an image). Only ragjudge's is ever deleted. Never
    while this process holds the file open through SQLite (`OpenStores`): closing it here would unlock them."""
    with path.open("rb") as fh:
        head = fh.read(72)
    if not head:
        return "ragjudge"
    if not head.startswith(SQLITE_HEADER):
        return "other"
    return "ragjudge" if len(head) >= 72 and int.from_bytes(head[68:72], "big") in (APPLICATION_ID, 0) else "sqlite"


class OpenStores:
    """The store connections this process has open (or is opening), by file.

    SQLite's locking between processes is POSIX advisory locks, which belong to the process: closing any descriptor
    of a file drops every lock the process holds on it. SQLite keeps track of its own descriptors, but a plain open
    and close of the file (reading its header, `file_owner`) silently unlocked every connection this process had on
    it; another process, seeing none, then checkpointed and deleted the write-ahead log they were using, so their
    later writes were lost, and a page could be written over the file's header (seen in the suite: a second store
    object on the same folder in one process, and a `ragjudge` subprocess). So the header is read only while no
    connection of this process is open on the file, a connection is closed when its store is (or when the store is
    garbage, not whenever the connection itself is), and a file is closed everywhere in the process before it is
    deleted. Process-wide on purpose, like the locks it guards."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        """Re-entrant: a garbage store's connection is closed (`release`) whenever the collector runs, which may be
        in this very thread while it holds the lock (an allocation in `claim`)."""
        self._connections: dict[str, int] = {}
        self._stores: dict[str, weakref.WeakSet[EmbeddingStore]] = {}

    def claim(self, store: EmbeddingStore, check: Callable[[], None]) -> str:
        """Count a connection of `store` as opening on its file, first running `check` (a read of its header) if no
        other connection of this process is open on it: under one lock, so that no header read overlaps a
        connection being made. Answers the file's key for `release`."""
        key = os.path.realpath(store.path)
        with self._lock:
            if not self._connections.get(key):
                check()
            self._connections[key] = self._connections.get(key, 0) + 1
            self._stores.setdefault(key, weakref.WeakSet()).add(store)
        return key

    def release(self, key: str) -> None:
        """A connection `claim` counted is closed (or was never made)."""
        with self._lock:
            left = self._connections.get(key, 0) - 1
            if left > 0:
                self._connections[key] = left
            else:  # none open: nothing for `close_all` to close either (a store connecting again is claimed anew),
                self._connections.pop(key, None)  # so a process that opens many stores keeps no entry per file
                self._stores.pop(key, None)

    def owner(self, path: Path) -> str:
        """`file_owner`, without opening a file this process has open (it is then a store of ours)."""
        with self._lock:
            return "ragjudge" if self._connections.get(os.path.realpath(path)) else file_owner(path)

    def close_all(self, path: Path) -> None:
        """Close every store of this process on `path` (each opens again if used again)."""
        with self._lock:
            stores = list(self._stores.get(os.path.realpath(path), ()))
        for store in stores:  # outside the lock: a store's own lock is taken before this one when it connects
            store.close()


def _close_connection(db: sqlite3.Connection, key: str) -> None:
    """A store's connection closed, and no longer counted (`OpenStores`); run once, by `close` or when the store
    is garbage."""
    try:
        db.close()
    finally:
        OPEN_STORES.release(key)


OPEN_STORES = OpenStores()


def _can_write(path: Path) -> bool:
    """Whether this process may write `path`, by its effective user (what the OS checks when it writes)."""
    effective = os.access in os.supports_effective_ids
    return os.access(path, os.W_OK, effective_ids=effective)


class EmbeddingStoreWarning(RagjudgeWarning):
    """The store cannot be written; encoding goes on without keeping what it computes."""


def text_hash(text: str) -> bytes:
    """SHA-256 of the text's UTF-8 bytes, lone surrogates passed through. ASCII text takes the plain encoder (the
    same bytes; with an error handler named, CPython's encode took twice as long: 0.48 against 0.24 us a passage)."""
    return hashlib.sha256(text.encode() if text.isascii() else text.encode("utf-8", "surrogatepass")).digest()


def pack(ids: bytes, vectors: bytes, rows: int, dim: int) -> bytes:
    """One entry: header, optional int32 token ids, float32 vectors; the CRC covers both payloads."""
    return _HEADER.pack(_MAGIC, rows, dim, zlib.crc32(vectors, zlib.crc32(ids))) + ids + vectors


def pack_vectors(matrix: np.ndarray) -> tuple[bytes, int]:
    """`pack` of each row of a (rows, dim) float32 matrix as a pooled vector (one row, no ids), the entries laid end
    to end: (the entries, each one's size). Headers and vectors are laid out by numpy at once: a third of the
    per-entry Python work, where indexing stores every text."""
    rows, dim = matrix.shape
    entry = np.dtype([("magic", "S4"), ("rows", "<u4"), ("dim", "<u4"), ("crc", "<u4"), ("vector", "<f4", (dim,))])
    vectors = np.ascontiguousarray(matrix, dtype="<f4")
    packed = np.empty(rows, dtype=entry)
    packed["magic"], packed["rows"], packed["dim"], packed["vector"] = _MAGIC, 1, dim, vectors
    flat, width = memoryview(vectors.reshape(-1)).cast("B"), 4 * dim
    packed["crc"] = [zlib.crc32(flat[i * width : (i + 1) * width]) for i in range(rows)]
    return packed.tobytes(), entry.itemsize


def unpack(blob: bytes, with_ids: bool) -> tuple[bytes, bytes, int, int] | None:
    """(ids, vectors, rows, dim), or None for a truncated, corrupt or other-format entry."""
    if len(blob) < _HEADER.size:
        return None
    magic, rows, dim, crc = _HEADER.unpack_from(blob)
    ids_end = _HEADER.size + (4 * rows if with_ids else 0)
    if magic != _MAGIC or len(blob) != ids_end + 4 * rows * dim:
        return None
    ids, vectors = blob[_HEADER.size:ids_end], blob[ids_end:]
    if zlib.crc32(vectors, zlib.crc32(ids)) != crc:
        return None
    return ids, vectors, rows, dim


@dataclass(frozen=True)
class SpaceInfo:
    label: str
    entries: int
    bytes: int
    created: float
    last_used: float | None
    key: dict[str, Any]


@dataclass(frozen=True)
class StoreInfo:
    path: str
    file_bytes: int
    spaces: list[SpaceInfo]


class EmbeddingStore:
    """The store in one folder. Thread-safe; several processes may share it (SQLite WAL, busy timeout)."""

    def __init__(self, folder: str | Path, *, read_only: bool = False):
        self.folder = Path(folder)
        self.path = self.folder / STORE_FILE
        self.writable = not read_only
        self.read_only = read_only
        """Opened to look only (`ragjudge cache info`): never written, and no warning that writing is off."""
        self._db: sqlite3.Connection | None = None
        self._closer: weakref.finalize | None = None
        """Closes `_db` and stops counting it (`OpenStores`): at `close`, or when this store is garbage."""
        self._spaces: dict[str, int] = {}
        self._lock = threading.Lock()
        self.corrupt_entries = 0

    # -- opening ----------------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection | None:
        """The open database, or None when there is none to read and none can be made (writes are off)."""
        if self._db is not None:
            return self._db
        try:
            exists = self.path.exists()
        except OSError as exc:  # a folder this user may not enter
            self.disable(f"cannot read {self.folder} ({exc.strerror or exc})")
            return None
        if not exists and self.writable:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                probe = self.folder / f".write-probe-{os.getpid()}"
                probe.touch()
                probe.unlink()
            except OSError as exc:
                self.disable(f"cannot write to {self.folder} ({exc.strerror or exc})")
        if not exists and not self.writable:
            return None

        def refuse_foreign() -> None:
            if exists and self.path.is_file() and file_owner(self.path) == "other":
                raise ForeignStoreError(f"{self.path} is not a ragjudge embedding store (not a database at all); "
                                        f"move it, or give another --cache-dir")

        key = OPEN_STORES.claim(self, refuse_foreign)
        db: sqlite3.Connection | None = None
        try:
            if self.writable and _can_write(self.folder) and (not exists or _can_write(self.path)):
                db = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
            else:
                self.disable(f"{self.path} is read-only")
                db = self._read_only_connection()
            self._check(db, exists)
        except BaseException as exc:
            if db is not None:  # never left open behind the store's back (see `OpenStores`)
                db.close()
            OPEN_STORES.release(key)
            if isinstance(exc, sqlite3.OperationalError):  # cannot open or lock it (permissions, read-only medium)
                self.disable(f"cannot open {self.path} ({exc})")
                return None
            if isinstance(exc, sqlite3.DatabaseError):
                raise self._damaged(exc) from None
            raise
        self._db = db
        self._closer = weakref.finalize(self, _close_connection, db, key)
        return db

    def _read_only_connection(self) -> sqlite3.Connection:
        """The file opened for reading. In a folder that cannot be written, SQLite cannot make the shared-memory
        file a WAL database needs to be read: then it is read as immutable (what a checkpoint left; a write still in
        the WAL file is not seen, which costs an encode, never a wrong vector)."""
        uri = self.path.resolve().as_uri()
        db: sqlite3.Connection | None = None
        try:
            db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=60, check_same_thread=False, isolation_level=None)
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError:
            if db is not None:  # closed here, not left to the garbage collector (see `OpenStores`)
                db.close()
            return sqlite3.connect(f"{uri}?immutable=1", uri=True, timeout=60, check_same_thread=False,
                                   isolation_level=None)

    def _damaged(self, exc: Exception) -> EmbeddingStoreError:
        return EmbeddingStoreError(f"{self.path}: not a usable ragjudge embedding store ({exc}); nothing was read "
                                   f"from it. `ragjudge cache clear` removes a damaged store; a file that is not "
                                   f"ragjudge's: move it, or give another --cache-dir")

    def _check(self, db: sqlite3.Connection, existed: bool) -> None:
        app = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if existed and (app, tables) != (0, set()) and app != APPLICATION_ID:
            raise ForeignStoreError(f"{self.path} is not a ragjudge embedding store (another program's SQLite "
                                      f"file); move it, or give another --cache-dir")
        if version > FORMAT:
            raise EmbeddingStoreError(f"{self.path} was written by a newer ragjudge (store format {version}, this "
                                      f"one reads {FORMAT}); upgrade, or give another --cache-dir")
        if self.writable:
            db.execute("PRAGMA busy_timeout = 60000")
            db.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new file's only: an existing one keeps its pages
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")  # durable across a killed process, which is what resuming needs
            # a block write's statement journal (the pages it changes, kept to undo the one statement) in memory: on
            # disk it was a temporary file opened, written and deleted per write, 0.3 us of CPU an entry (6 %)
            db.execute("PRAGMA temp_store = MEMORY")
            db.execute("BEGIN IMMEDIATE")
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {FORMAT}")
            db.execute("CREATE TABLE IF NOT EXISTS spaces (id INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, "
                       "label TEXT NOT NULL, created REAL NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS entries (space INTEGER NOT NULL, hash BLOB NOT NULL, "
                       "value BLOB NOT NULL, used REAL NOT NULL, PRIMARY KEY (space, hash))")
            db.execute("COMMIT")
        # a quick read of the schema proves the file is a database at all (a damaged header fails here)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()

    def verify(self) -> None:
        """Refuse a foreign or damaged file now, before a run does any work (nothing is created): its header, its
        schema and every page's structure (SQLite's quick_check: a read of the file, no vector decoded; entries
        damaged inside are caught by their CRC when read)."""
        try:
            present = self.path.is_file()
        except OSError:  # unreadable folder: the first use says so, as a warning
            return
        if present:
            with self._lock:
                db = self._connect()
                if db is None:
                    return
                try:
                    verdict = db.execute("PRAGMA quick_check(1)").fetchone()[0]
                except sqlite3.DatabaseError as exc:
                    raise self._damaged(exc) from None
                if verdict != "ok":
                    raise self._damaged(ValueError(str(verdict)))

    def disable(self, why: str) -> None:
        """Stop writing (reads go on where they can); say so once."""
        if self.writable and not self.read_only:
            self.writable = False
            warnings.warn(f"embedding cache off: {why}; texts are encoded without being kept",
                          EmbeddingStoreWarning, stacklevel=3)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                if self._closer is not None:
                    self._closer()
                self._db = None
                self._spaces.clear()  # opened again, the file may be a new one, whose spaces have other ids

    # -- spaces ------------------------------------------------------------------------------------------
    def _space_id(self, db: sqlite3.Connection, key: dict[str, Any], label: str, create: bool) -> int | None:
        blob = json.dumps(key, sort_keys=True, default=str)
        if blob in self._spaces:
            return self._spaces[blob]
        if not self._has_tables(db):
            return None
        row = db.execute("SELECT id FROM spaces WHERE key = ?", (blob,)).fetchone()
        if row is None and create and self.writable:
            db.execute("INSERT OR IGNORE INTO spaces (key, label, created) VALUES (?, ?, ?)", (blob, label, time.time()))
            row = db.execute("SELECT id FROM spaces WHERE key = ?", (blob,)).fetchone()
        if row is not None:
            self._spaces[blob] = int(row[0])
            return int(row[0])
        return None

    @staticmethod
    def _has_tables(db: sqlite3.Connection) -> bool:
        return db.execute("SELECT 1 FROM sqlite_master WHERE name = 'entries'").fetchone() is not None

    # -- entries -----------------------------------------------------------------------------------------
    def get_many(self, key: dict[str, Any], label: str, texts: Sequence[str]) -> dict[str, bytes]:
        """The stored entries of `texts` in that space (texts absent from the result are not stored)."""
        if not texts:
            return {}
        with self._lock:
            try:
                db = self._connect()
                if db is None:
                    return {}
                space = self._space_id(db, key, label, create=False)
                if space is None:
                    return {}
                by_hash = {text_hash(t): t for t in texts}
                hashes = list(by_hash)
                found: dict[str, bytes] = {}
                for start in range(0, len(hashes), _MAX_VARS):
                    part = hashes[start : start + _MAX_VARS]
                    marks = ",".join("?" * len(part))
                    for h, value in db.execute(f"SELECT hash, value FROM entries WHERE space = ? AND hash IN ({marks})",
                                               (space, *part)):
                        found[by_hash[bytes(h)]] = bytes(value)
                if found and self.writable:
                    self._touch(db, space, [text_hash(t) for t in found])
                return found
            except sqlite3.DatabaseError as exc:
                raise self._damaged(exc) from None

    def _touch(self, db: sqlite3.Connection, space: int, hashes: list[bytes]) -> None:
        """Mark entries used now (what `cache clear --older-than` goes by); best effort."""
        try:
            db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:  # locked by another writer for a minute, or read-only: not worth failing
            return
        now = time.time()
        db.executemany("UPDATE entries SET used = ? WHERE space = ? AND hash = ?", [(now, space, h) for h in hashes])
        db.execute("COMMIT")

    def put_many(self, key: dict[str, Any], label: str, items: Sequence[tuple[str, bytes]]) -> None:
        """Store entries in one transaction (durable when this returns)."""
        if items:
            self._write(key, label, lambda db, space, now: db.executemany(
                "INSERT OR REPLACE INTO entries (space, hash, value, used) VALUES (?, ?, ?, ?)",
                [(space, text_hash(t), v, now) for t, v in items]))

    def put_block(self, key: dict[str, Any], label: str, texts: Sequence[str], block: bytes, size: int) -> None:
        """Store the entries of `texts`, all `size` bytes long and laid end to end in `block` (`pack_vectors`), in
        one transaction and one statement: SQLite cuts the rows out of the two blobs itself, a microsecond an entry
        less than a row of parameters each (issue 44: indexing stores every text)."""
        if len(block) != size * len(texts):
            raise ValueError(f"{len(texts)} texts but {len(block)} bytes of {size}-byte entries")
        if texts:
            hashes = b"".join(map(text_hash, texts))
            self._write(key, label, lambda db, space, now: db.execute(_INSERT_BLOCK, (
                len(texts), space, hashes, block, size, size, now)))

    def _write(self, key: dict[str, Any], label: str,
               insert: Callable[[sqlite3.Connection, int | None, float], Any]) -> None:
        """`insert` the entries of one space in one transaction (durable when this returns)."""
        if not self.writable:
            return
        with self._lock:
            try:
                db = self._connect()
                if db is None or not self.writable:
                    return
                db.execute("BEGIN IMMEDIATE")
                try:
                    insert(db, self._space_id(db, key, label, create=True), time.time())
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
            except sqlite3.OperationalError as exc:  # disk full, read-only file system...
                self.disable(f"cannot write to {self.path} ({exc})")
            except sqlite3.DatabaseError as exc:
                raise self._damaged(exc) from None

    # -- housekeeping --------------------------------------------------------------------------------------
    def info(self) -> StoreInfo:
        if self.path.is_dir():
            raise ForeignStoreError(f"{self.path} is a folder, not a ragjudge embedding store; move it, or give "
                                    "another --cache-dir")
        size = sum(p.stat().st_size for p in self._files() if p.exists())
        if not self.path.exists():
            return StoreInfo(str(self.path), 0, [])
        with self._lock:
            try:
                db = self._connect()
                if db is None:  # a folder this user may not read
                    raise EmbeddingStoreError(f"{self.path}: cannot be read (permission denied?)")
                if not self._has_tables(db):
                    return StoreInfo(str(self.path), size, [])
                rows = db.execute("SELECT s.label, s.key, s.created, count(e.hash), coalesce(sum(length(e.value)), 0), "
                                  "max(e.used) FROM spaces s LEFT JOIN entries e ON e.space = s.id GROUP BY s.id "
                                  "ORDER BY s.created").fetchall()
            except sqlite3.DatabaseError as exc:
                raise self._damaged(exc) from None
        return StoreInfo(str(self.path), size, [SpaceInfo(label, n, b, created, used, json.loads(key))
                                                for label, key, created, n, b, used in rows])

    def clear(self, older_than: float | None = None) -> int:
        """Remove entries not used for `older_than` seconds (None: everything, the file too); entries removed. A file
        that is not ragjudge's store is never deleted (ForeignStoreError); a damaged one of ragjudge's is."""
        if not self.path.exists():
            return 0
        if not self.path.is_file() or OPEN_STORES.owner(self.path) != "ragjudge":
            raise ForeignStoreError(f"{self.path} is not a ragjudge embedding store: not deleted; move it, or give "
                                    "another --cache-dir")
        if not (_can_write(self.folder) and _can_write(self.path)):
            raise PermissionError(13, "Permission denied: cannot change the store", str(self.path))
        if older_than is None:
            counter = EmbeddingStore(self.folder, read_only=True)
            try:
                count = sum(s.entries for s in counter.info().spaces)
            except ForeignStoreError:
                raise
            except EmbeddingStoreError:
                count = 0  # damaged: removed all the same
            finally:
                counter.close()
            OPEN_STORES.close_all(self.path)  # this one too: no connection of this process outlives the files
            for p in self._files():
                p.unlink(missing_ok=True)
            return count
        with self._lock:
            try:
                db = self._connect()
                if db is None or not self.writable:
                    raise PermissionError(13, "Permission denied", str(self.folder))
                if not self._has_tables(db):
                    return 0
                removed = db.execute("DELETE FROM entries WHERE used < ?", (time.time() - older_than,)).rowcount
                db.execute("DELETE FROM spaces WHERE id NOT IN (SELECT DISTINCT space FROM entries)")
                self._spaces.clear()
                db.execute("VACUUM")
            except sqlite3.OperationalError as exc:  # read-only, locked: the machine's, not the input's
                raise PermissionError(13, f"cannot change the store ({exc})", str(self.path)) from None
            except sqlite3.DatabaseError as exc:
                raise self._damaged(exc) from None
        return int(removed)

    def _files(self) -> Iterator[Path]:
        yield self.path
        yield self.path.with_name(STORE_FILE + "-wal")
        yield self.path.with_name(STORE_FILE + "-shm")
