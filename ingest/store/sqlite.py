"""The embedded store: one SQLite file with an FTS5 index (BM25), the zero-setup default.

Layout: ``documents`` (one row per document version, the sync state), ``chunks`` (the
records), ``chunks_fts`` (an external-content FTS5 index over title, section and text,
kept in step by triggers), ``meta`` (chunker, sizes, parser version, build time, roles,
analysis). Role and as-of filters are part of the SQL query, so they apply before the top k.

The FTS5 tokenizer follows ``[search] language``: ``porter unicode61`` for english (Porter
stemming, as Elasticsearch's ``english`` analyzer: "invoice" finds "Invoicing"), ``unicode61``
for none. It is fixed when the file is created; the pipeline rebuilds the file when the
recorded ``analysis`` differs. Columns are weighted by ``FIELD_WEIGHTS`` (shared with
Elasticsearch); codes in the query (``NW-4471-B``) are also matched as phrases.

A full rebuild writes a new file next to the old one and renames it over, so a reader
never sees a half-built index and a crash leaves the old one intact. The write lock is
an ``flock`` on a side file: the kernel drops it when a run dies, so a killed run's
lock always expires.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import Any

from ingest.model import Chunk, DocKey, DocumentRecord, Hit
from ingest.settings import DEFAULT_LANGUAGE, Settings
from ingest.store.base import (
    EXACT_TOKEN,
    FIELD_WEIGHTS,
    Access,
    AmbiguousPrefix,
    ChunkNotFound,
    Counts,
    SearchEntry,
    StoreLocked,
    StoreUnavailable,
    WriteReport,
    follow_recorded_roles,
    lookup_prefix,
    poll_until,
)
from ingest.store.records import record_of

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
  doc_id TEXT NOT NULL, version TEXT NOT NULL, title TEXT NOT NULL, source TEXT NOT NULL,
  source_sha256 TEXT NOT NULL, format TEXT NOT NULL, access TEXT NOT NULL, status TEXT NOT NULL,
  effective_from TEXT, effective_to TEXT, superseded_by TEXT, tags TEXT NOT NULL,
  settings_fingerprint TEXT NOT NULL, chunk_ids TEXT NOT NULL,
  PRIMARY KEY (doc_id, version)
);
CREATE TABLE IF NOT EXISTS chunks (
  rowid INTEGER PRIMARY KEY,
  chunk_id TEXT NOT NULL UNIQUE, doc_id TEXT NOT NULL, version TEXT NOT NULL, title TEXT NOT NULL,
  section TEXT NOT NULL, sections TEXT NOT NULL, heading_path TEXT NOT NULL, position INTEGER NOT NULL,
  start INTEGER NOT NULL, "end" INTEGER NOT NULL, pages TEXT NOT NULL, text TEXT NOT NULL,
  word_count INTEGER NOT NULL, access TEXT NOT NULL, effective_from TEXT, effective_to TEXT,
  status TEXT NOT NULL, superseded_by TEXT, tags TEXT NOT NULL, source TEXT NOT NULL,
  source_sha256 TEXT NOT NULL, chunker TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (doc_id, version, position);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
  title, section, text, content='chunks', content_rowid='rowid', tokenize='@TOKENIZE@'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
  INSERT INTO chunks_fts(rowid, title, section, text) VALUES (new.rowid, new.title, new.section, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
  INSERT INTO chunks_fts(chunks_fts, rowid, title, section, text)
    VALUES ('delete', old.rowid, old.title, old.section, old.text);
END;
"""

# [search] language -> FTS5 tokenizer of chunks_fts.
LANGUAGE_TOKENIZERS = {"english": "porter unicode61", "none": "unicode61"}
# Lucene's EnglishAnalyzer stop words (what Elasticsearch's `english` analyzer drops): left out of
# english queries so that both stores match the same chunks (FTS5 has no stop-word filter).
_ENGLISH_STOP_WORDS_TEXT = (
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with"
)
ENGLISH_STOP_WORDS = frozenset(_ENGLISH_STOP_WORDS_TEXT.split())
# BM25 column weights for the FTS columns (title, section, text), shared with Elasticsearch.
BM25_WEIGHTS = tuple(FIELD_WEIGHTS[column] for column in ("title", "section", "text"))

_CHUNK_COLUMNS_TEXT = (
    "chunk_id doc_id version title section sections heading_path position start end pages text "
    "word_count access effective_from effective_to status superseded_by tags source source_sha256 "
    "chunker"
)
CHUNK_COLUMNS = tuple(_CHUNK_COLUMNS_TEXT.split())
JSON_COLUMNS = {"sections", "heading_path", "pages", "tags"}
SELECT_CHUNK = ", ".join(f'c."{c}"' for c in CHUNK_COLUMNS)

_DOC_COLUMNS_TEXT = (
    "doc_id version title source source_sha256 format access status effective_from effective_to "
    "superseded_by tags settings_fingerprint chunk_ids"
)
DOC_COLUMNS = tuple(_DOC_COLUMNS_TEXT.split())


def fts_query(text: str, language: str = DEFAULT_LANGUAGE) -> str | None:
    """Free text to an FTS5 query: every word quoted (no syntax from the user), OR-ed like BM25;
    codes (NW-4471-B) also as phrases, so the whole code outranks its loose parts. In english,
    stop words and the possessive 's are dropped, as Elasticsearch's english analyzer does."""
    text = text.lower()
    if language == "english":
        text = re.sub(r"['’]s\b", "", text)
    words = re.findall(r"\w+", text)
    if language == "english":
        words = [w for w in words if w not in ENGLISH_STOP_WORDS]
    if not words:
        return None
    codes = [" ".join(re.findall(r"\w+", code)) for code in re.findall(EXACT_TOKEN, text.lower())]
    return " OR ".join(f'"{w}"' for w in dict.fromkeys([*words, *codes]))


def _chunk_from_row(row: Sequence[Any]) -> Chunk:
    data = dict(zip(CHUNK_COLUMNS, row, strict=True))
    for name in JSON_COLUMNS:
        data[name] = json.loads(data[name])
    return Chunk.from_json(data)


def _chunk_to_row(chunk: Chunk) -> tuple[Any, ...]:
    data = chunk.to_json()
    return tuple(json.dumps(data[c]) if c in JSON_COLUMNS else data[c] for c in CHUNK_COLUMNS)


def _read_only(path: Path) -> bool:
    """The store file, or the folder it (or its WAL side files) would be written in, cannot be written."""
    folder = path.parent if path.parent.exists() else next((p for p in path.parents if p.exists()), Path("/"))
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return True
    except OSError:
        return False
    return not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK))


def _identity(path: Path) -> tuple[int, int] | None:
    """(st_dev, st_ino) of the file at ``path``; None when there is none."""
    try:
        found = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return found.st_dev, found.st_ino


def _trouble(name: str, exc: BaseException, doing: str, path: Path | None = None) -> StoreUnavailable:
    """One clear line for a SQLite or file system failure (exit 3), never a traceback."""
    text = str(exc) if not isinstance(exc, OSError) else (exc.strerror or str(exc))
    low = text.lower()
    if "full" in low or getattr(exc, "errno", None) == errno.ENOSPC:
        hint = "the disk is full; free space and run again (the next run repairs what this one left)"
    elif (
        "readonly" in low
        or "read-only" in low
        or getattr(exc, "errno", None) in (errno.EROFS, errno.EACCES, errno.EPERM)
        or (path is not None and _read_only(path))
    ):
        hint = "the store file or its folder is read-only (or not ours to write); use a writable --store path"
    elif "malformed" in low or "not a database" in low or "corrupt" in low:
        hint = "the store file is damaged; move it aside and rebuild with `ingest run CORPUS --full`"
    elif "locked" in low or "busy" in low:
        hint = "another process holds the database; try again"
    else:
        hint = "check the path and the disk"
    return StoreUnavailable(f"{name}: {doing} failed: {text}; {hint}")


class SQLiteStore(SearchEntry):
    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        create: bool = True,
        language: str = DEFAULT_LANGUAGE,
        _bulk: bool = False,
    ):
        self.path = Path(path)
        self.language = language
        self.analysis = LANGUAGE_TOKENIZERS[language]  # the tokenizer a new file gets
        self.name = f"sqlite:///{path}"
        self.create = create  # False for readers: a missing file is an error, not a new index
        self._bulk = _bulk  # inside a full rebuild: one transaction, committed at the end
        self._conn: sqlite3.Connection | None = None
        self._file: tuple[int, int] | None = None  # (st_dev, st_ino) of the file self._conn reads
        self._opened = 0  # connections opened so far, and writes committed through them:
        self._written = 0  # with PRAGMA data_version, what read_state tells apart
        # A service's threads share one Index: a read must never run on a connection another
        # thread is closing because the file was replaced (closing under a running statement
        # crashes the process). Reads, reopening and closing take turns under this lock.
        self._reading = threading.RLock()

    # --- lifecycle -------------------------------------------------------
    def _connect(self, create: bool = True) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        if not create and not self.path.exists():
            raise StoreUnavailable(f"{self.name}: no index here yet; run `ingest run CORPUS` first")
        # The file's identity before connecting: if a rebuild renames another file in between, the
        # connection reads the new one and the next read only reopens it once more, never stale.
        before = _identity(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # A run's writer thread writes the scan's batches while the run's own thread waits for
            # them: the connection passes between the two, never used by both at once.
            conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        except (sqlite3.Error, OSError) as exc:
            raise _trouble(self.name, exc, "opening the SQLite store", self.path) from None
        try:
            self._prepare(conn)
            if self._bulk:
                conn.execute("BEGIN")
        except sqlite3.Error as exc:
            conn.close()
            raise _trouble(self.name, exc, "opening the SQLite store", self.path) from None
        self._conn = conn
        self._file = before or _identity(self.path)  # a file this connection just made: its own
        self._opened += 1
        return conn

    def _current(self) -> bool:
        """Is there a file at the path? A connection to a file that is no longer there (a ``--full``
        rebuild renamed a new file over it, or it was deleted) is closed first, so that a long-lived
        reader (the library's Index) reads the file at its path now, never the one it once opened.
        Never inside a transaction or a rebuild: a writer holds the lock, and nobody replaces its file."""
        found = _identity(self.path)
        conn = self._conn
        if conn is not None and found != self._file and not self._bulk and not conn.in_transaction:
            self.close()
        return found is not None

    def read_state(self) -> object:
        """Changes whenever what this store reads may have changed since the last call: another
        file at the path, or a write committed to it by anyone (PRAGMA data_version, one cheap
        pragma). The library's Index resolves roles again when it changes."""
        with self._reading:
            if not self._current():
                return None
            try:
                version = self._connect().execute("PRAGMA data_version").fetchone()[0]
            except sqlite3.Error as exc:
                raise _trouble(self.name, exc, "reading") from None
            return (self._opened, self._written, version)

    def _prepare(self, conn: sqlite3.Connection, wait_s: float = 30.0) -> None:
        """Journal mode and schema. Switching to WAL needs the file to itself and does not
        wait on the busy handler, so while another run writes it is retried here."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                if self._bulk:
                    conn.execute("PRAGMA journal_mode=OFF")
                    conn.execute("PRAGMA synchronous=OFF")
                else:
                    if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                        conn.execute("PRAGMA journal_mode=WAL")
                    conn.execute("PRAGMA synchronous=NORMAL")
                if (
                    conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'chunks_ad'").fetchone()[0] == 0
                ):  # the schema's last object
                    conn.executescript(SCHEMA.replace("@TOKENIZE@", self.analysis))
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @property
    def exists(self) -> bool:
        return self.path.exists()

    def check(self) -> None:
        """Can the store be used? Writes nothing: an existing file is opened read-only and read
        (a damaged one is StoreUnavailable); a missing one is an error for readers
        (``create=False``), and for writers its folder must be writable (the file itself is made
        by the first write, so a dry run leaves no file behind)."""
        if self._conn is not None:
            return
        if not self.path.exists():
            if not self.create:
                raise StoreUnavailable(f"{self.name}: no index here yet; run `ingest run CORPUS` first")
            if _read_only(self.path):
                raise _trouble(
                    self.name, PermissionError(errno.EACCES, "read-only"), "opening the SQLite store", self.path
                )
            return
        try:
            # Without a WAL file the main file is the whole store: read it as immutable, so that
            # no -wal/-shm side files appear either; with one, a read-only reader uses it.
            wal = Path(f"{self.path}-wal").exists()
            mode = "mode=ro" if wal else "mode=ro&immutable=1"
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?{mode}", uri=True, timeout=30)
            try:
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            finally:
                conn.close()
        except sqlite3.Error as exc:
            raise _trouble(self.name, exc, "opening the SQLite store", self.path) from None

    def close(self) -> None:
        with self._reading:
            if self._conn is None:
                return
            conn, self._conn = self._conn, None
            try:
                if conn.in_transaction:
                    conn.commit()
            except sqlite3.Error as exc:
                raise _trouble(self.name, exc, "committing") from None
            finally:
                conn.close()

    def reconcile_access(
        self, roles: Mapping[str, Sequence[str]] | None = None, *, check: bool = False, full: bool = False
    ) -> list[str]:
        """The store's role map (``roles`` in its meta: the labels a search of each role reads, as
        Elasticsearch's role aliases) made to match ``roles``; one line per change (``check``: per
        difference, nothing changed). A store with no document yet has nothing to follow; without
        ``roles`` (no settings given) there is nothing to compare with."""
        if roles is None or not self.path.exists() or not self._read("SELECT 1 FROM documents LIMIT 1"):
            return []
        return follow_recorded_roles(self, self.get_meta(), Settings(), roles, check=check)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect()
        if self._bulk or conn.in_transaction:
            try:
                yield conn
            except sqlite3.Error as exc:
                raise _trouble(self.name, exc, "writing", self.path) from None
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.commit()
                self._written += 1
            except BaseException:
                if conn.in_transaction:
                    conn.rollback()
                raise
        except sqlite3.Error as exc:
            # Disk full, read-only, damaged: the transaction is rolled back whole, and the
            # run stops with one line (exit 3); the next run repairs from a consistent file.
            raise _trouble(self.name, exc, "writing", self.path) from None

    @contextmanager
    def lock(self, owner: str, wait_s: float = 0.0) -> Iterator[None]:
        """The write lock: an flock on a stable side file (never the database file, which a
        full rebuild replaces). Whatever was read before it is read again after it: the
        connection is closed before waiting and opened afresh once the lock is ours, so a
        run that waited for a ``--full`` rebuild writes into the new file, not the old one."""
        self.close()
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _trouble(self.name, exc, f"creating the lock file {lock_path}", self.path) from None

        def take() -> bool | None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                return None

        def held_elsewhere() -> StoreLocked:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another run"
            return StoreLocked(
                f"{self.name} is being written by {holder}; wait for it to finish or run with --wait SECONDS "
                "(a killed run's lock is released at once)"
            )

        try:
            poll_until(take, wait_s, held_elsewhere, every_s=0.2)
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, owner.encode(), 0)
            except OSError:
                pass  # the holder's name is a courtesy for messages; the flock is the lock
            self.close()  # a run that waited may hold a connection to a file replaced meanwhile
            yield
        finally:
            os.close(fd)  # closing drops the flock

    @contextmanager
    def full_rebuild(self) -> Iterator[SQLiteStore]:
        tmp = self.path.with_name(f".{self.path.name}.{uuid.uuid4().hex[:8]}.building")
        new = SQLiteStore(tmp, language=self.language, _bulk=True)
        try:
            new.set_meta(self.get_meta() if self.path.exists() else {})
            yield new
            try:
                conn = new._connect()
                conn.commit()
                conn.execute("PRAGMA journal_mode=WAL")
                conn.close()
                new._conn = None
            except sqlite3.Error as exc:
                raise _trouble(self.name, exc, "finishing the rebuilt store") from None
            self.close()
            # Old WAL side files belong to the old file: drop them before the rename.
            for suffix in ("-wal", "-shm"):
                Path(str(self.path) + suffix).unlink(missing_ok=True)
            try:
                os.replace(tmp, self.path)
            except OSError as exc:
                raise _trouble(self.name, exc, "replacing the store with the rebuilt one") from None
        except BaseException:
            # Journal off while building: a failed build is thrown away whole, never renamed
            # over the good file (which stays as it was).
            if new._conn is not None:
                new._conn.close()
                new._conn = None
            for leftover in (tmp, Path(f"{tmp}-journal"), Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
                leftover.unlink(missing_ok=True)
            raise
        self.name = f"sqlite:///{self.path}"

    # --- documents -------------------------------------------------------
    def documents(self) -> list[DocumentRecord]:
        if not self.path.exists():
            return []
        rows = self._read(f"SELECT {', '.join(DOC_COLUMNS)} FROM documents ORDER BY doc_id, version")
        out = []
        for row in rows:
            data = dict(zip(DOC_COLUMNS, row, strict=True))
            data["tags"] = json.loads(data["tags"])
            data["chunk_ids"] = json.loads(data["chunk_ids"])
            out.append(record_of(data))  # as DocumentRecord.from_json
        return out

    def put_document(self, record: DocumentRecord) -> None:
        self.put_documents([record])

    def put_documents(self, records: Iterable[DocumentRecord]) -> None:
        rows = []
        for record in records:
            data = record.to_json()
            rows.append([json.dumps(data[c]) if c in ("tags", "chunk_ids") else data[c] for c in DOC_COLUMNS])
        with self._transaction() as conn:
            marks = ", ".join("?" * len(DOC_COLUMNS))
            conn.executemany(f"INSERT OR REPLACE INTO documents ({', '.join(DOC_COLUMNS)}) VALUES ({marks})", rows)

    def delete_document(self, doc_id: str, version: str) -> None:
        self.delete_documents([DocKey(doc_id, version)])

    def delete_documents(self, keys: Iterable[DocKey | str]) -> None:
        pairs = [(key.doc_id, key.version) for key in map(DocKey.parse, keys)]
        with self._transaction() as conn:
            conn.executemany("DELETE FROM documents WHERE doc_id = ? AND version = ?", pairs)

    # --- chunks ----------------------------------------------------------
    def write_chunks(self, chunks: Iterable[Chunk]) -> WriteReport:
        report = WriteReport()
        cols = ", ".join(f'"{c}"' for c in CHUNK_COLUMNS)
        marks = ", ".join("?" * len(CHUNK_COLUMNS))
        with self._transaction() as conn:
            for chunk in chunks:
                # Delete then insert (not REPLACE) so the FTS delete trigger fires. A failure
                # here is the store's (disk full, read-only, damaged), not the chunk's: it
                # ends the transaction and the run (limits on chunks are the chunker's).
                conn.execute("DELETE FROM chunks WHERE chunk_id = ?", (chunk.chunk_id,))
                conn.execute(f"INSERT INTO chunks ({cols}) VALUES ({marks})", _chunk_to_row(chunk))
                report.written += 1
        return report

    def delete_chunks(self, chunk_ids: Iterable[str]) -> int:
        deleted = 0
        with self._transaction() as conn:
            for cid in chunk_ids:
                deleted += conn.execute("DELETE FROM chunks WHERE chunk_id = ?", (cid,)).rowcount
        return deleted

    def get_chunk(self, id_or_prefix: str) -> Chunk:
        prefix = lookup_prefix(id_or_prefix)
        rows = self._read(
            f"SELECT {SELECT_CHUNK} FROM chunks c WHERE c.chunk_id >= ? AND c.chunk_id < ? ORDER BY c.chunk_id LIMIT 6",
            (prefix, prefix + "g"),
        )
        if not rows:
            raise ChunkNotFound(f"no chunk with ID {id_or_prefix!r} in {self.name}")
        if len(rows) > 1:
            raise AmbiguousPrefix(prefix, [r[0] for r in rows])
        return _chunk_from_row(rows[0])

    def document_chunks(self, doc_id: str, version: str | None = None) -> list[Chunk]:
        if version is None:
            rows = self._read(
                f"SELECT {SELECT_CHUNK} FROM chunks c WHERE c.doc_id = ? ORDER BY c.version, c.position", (doc_id,)
            )
        else:
            rows = self._read(
                f"SELECT {SELECT_CHUNK} FROM chunks c WHERE c.doc_id = ? AND c.version = ? ORDER BY c.position",
                (doc_id, version),
            )
        return [_chunk_from_row(r) for r in rows]

    def neighbours(self, chunk: Chunk, n: int) -> tuple[list[Chunk], list[Chunk]]:
        if n <= 0:
            return [], []
        base = f"SELECT {SELECT_CHUNK} FROM chunks c WHERE c.doc_id = ? AND c.version = ? AND c.position "
        before = self._read(
            base + "< ? ORDER BY c.position DESC LIMIT ?", (chunk.doc_id, chunk.version, chunk.position, n)
        )
        after = self._read(base + "> ? ORDER BY c.position LIMIT ?", (chunk.doc_id, chunk.version, chunk.position, n))
        return [_chunk_from_row(r) for r in reversed(before)], [_chunk_from_row(r) for r in after]

    def chunk_keys(self) -> list[tuple[str, str, str]]:
        return [tuple(r) for r in self._read("SELECT chunk_id, doc_id, version FROM chunks ORDER BY chunk_id")]

    def iter_chunks(self) -> Iterator[Chunk]:
        for row in self._read(f"SELECT {SELECT_CHUNK} FROM chunks c ORDER BY c.doc_id, c.version, c.position"):
            yield _chunk_from_row(row)

    def _search(self, query: str, access: Access, as_of: date | None, top: int, doc_id: str | None) -> list[Hit]:
        """BM25 over the FTS5 index; the access labels and as-of filter are part of the query."""
        labels = access.labels
        match = fts_query(query, self.language)
        if match is None or not labels:
            return []
        sql = [
            f"SELECT {SELECT_CHUNK}, bm25(chunks_fts, {', '.join(map(str, BM25_WEIGHTS))}) AS rank",
            "FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid",
            f"WHERE chunks_fts MATCH ? AND c.access IN ({', '.join('?' * len(labels))})",
        ]
        params: list[Any] = [match, *labels]
        if as_of is not None:
            day = as_of.isoformat()
            sql.append("AND (c.effective_from IS NULL OR c.effective_from <= ?)")
            sql.append("AND (c.effective_to IS NULL OR c.effective_to >= ?)")
            params += [day, day]
        if doc_id:
            sql.append("AND c.doc_id = ?")
            params.append(doc_id)
        sql.append("ORDER BY rank, c.chunk_id LIMIT ?")
        params.append(int(top))
        rows = self._read(" ".join(sql), params)
        return [Hit(_chunk_from_row(r[:-1]), -float(r[-1])) for r in rows]

    def counts(self) -> Counts:
        by = {
            field: self._count(f"SELECT {field}, COUNT(*) FROM chunks GROUP BY {field} ORDER BY {field}")
            for field in ("access", "status", "version")
        }
        formats = self._count(
            "SELECT d.format, COUNT(*) FROM chunks c JOIN documents d "
            "ON d.doc_id = c.doc_id AND d.version = c.version GROUP BY d.format ORDER BY d.format"
        )
        totals = {
            "chunks": sum(n for (n,) in self._read("SELECT COUNT(*) FROM chunks")),
            "documents": sum(n for (n,) in self._read("SELECT COUNT(*) FROM documents")),
        }
        return Counts(
            access=by["access"],
            status=by["status"],
            version=by["version"],
            format=formats,
            totals={"chunks": totals["chunks"], "documents": totals["documents"]},
        )

    def _count(self, sql: str) -> dict[str, int]:
        return {str(key): int(n) for key, n in self._read(sql)}

    # --- meta --------------------------------------------------------------
    def get_meta(self) -> dict[str, str]:
        if not self.path.exists():
            return {}
        return dict(self._read("SELECT key, value FROM meta ORDER BY key"))

    def set_meta(self, values: Mapping[str, str]) -> None:
        with self._transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", list(values.items()))

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._reading:
            if not self._current() and self._conn is None:
                return []
            try:
                return self._connect().execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _trouble(self.name, exc, "reading") from None
