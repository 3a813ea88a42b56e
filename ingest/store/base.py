"""The one small interface both stores implement (SQLite and Elasticsearch).

The pipeline and the CLI talk only to this. Both stores must give the same records,
the same counts and the same filter results for the same calls; only scores differ.

Write order used by the pipeline for each batch of document versions (so that a crash
at any point leaves something ``repair`` can finish or roll back):
  1. ``write_chunks`` (new chunks; harmless orphans until their record exists)
  2. ``put_documents`` (the records, listing their chunk IDs, make them live)
  3. ``delete_chunks`` for what the new records replace; then, for versions that left
     the folder, ``delete_documents`` and their ``delete_chunks``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

from ingest.model import Chunk, DocumentRecord, Hit

# BM25 field weights shared by both stores, so that they rank alike: a match in a title or a
# section heading says more about the chunk than one word of its body.
FIELD_WEIGHTS = {"title": 2.0, "section": 1.5, "text": 1.0}

# Part numbers and codes (NW-4471-B, X40-2.1, 10.0.3): words joined by - . / : without spaces,
# with a digit somewhere (so "co-operative" or "lay-up" are not codes). Both stores also match
# them as exact phrases, so the code itself outranks chunks sharing only its parts.
EXACT_TOKEN = r"(?=[\w./:-]*\d)\w+(?:[-./:]\w+)+"


class StoreError(Exception):
    """A store problem that is not the user's input."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or refused us (exit 3, nothing written)."""


class StoreConfigError(StoreError):
    """The store named cannot be used as given (unknown scheme, bad prefix): a usage error (exit 2)."""


class StoreLocked(StoreError):
    """Another run holds the write lock on this store/prefix (exit 2)."""


class QueryTooLarge(StoreConfigError):
    """A search query with more distinct terms than the store can run: a usage error (exit 2)."""


class ChunkNotFound(StoreError):
    pass


class AmbiguousPrefix(StoreError):
    def __init__(self, prefix: str, matches: Sequence[str]):
        super().__init__(
            f"chunk ID prefix {prefix!r} matches {len(matches)} chunks: {', '.join(m[:12] for m in matches[:5])}…"
        )
        self.prefix = prefix
        self.matches = list(matches)


@dataclass(frozen=True)
class ItemError:
    """One record the store refused, with the reason it gave."""

    id: str
    reason: str


@dataclass
class WriteReport:
    written: int = 0
    errors: list[ItemError] = field(default_factory=list)


class Store(Protocol):
    """What every store offers. ``labels`` are the access labels the caller may read."""

    name: str  # for messages and JSON: "sqlite:///…" or "http://…"
    # How new indices analyse text for BM25 (from [search] language): recorded in the meta as
    # "analysis"; a store whose recorded analysis differs is rebuilt.
    analysis: str

    # --- lifecycle -------------------------------------------------------
    def check(self) -> None:
        """Raise StoreUnavailable if the store cannot be reached. Writes nothing."""

    def close(self) -> None: ...

    def refresh(self) -> None:
        """Make every write so far visible to searches (Elasticsearch refresh; no-op for SQLite)."""

    def lock(self, owner: str, wait_s: float = 0.0) -> AbstractContextManager[None]:
        """Exclusive write lock for one run; raises StoreLocked. A lock older than its TTL expires."""

    def full_rebuild(self) -> AbstractContextManager[Store]:
        """A fresh, empty store to fill; on clean exit it atomically replaces this one
        (new SQLite file renamed over the old; new ES indices behind moved aliases).
        On an exception the old store stays as it was."""

    # --- documents (sync state) -----------------------------------------
    def documents(self) -> list[DocumentRecord]: ...

    def put_document(self, record: DocumentRecord) -> None: ...

    def put_documents(self, records: Iterable[DocumentRecord]) -> None:
        """Many records at once (one bulk request per few MB)."""

    def delete_document(self, doc_id: str, version: str) -> None:
        """Delete the record (not its chunks: see delete_chunks)."""

    def delete_documents(self, keys: Iterable[str]) -> None:
        """Delete records by ``doc_id@version`` (not their chunks)."""

    # --- chunks ----------------------------------------------------------
    def write_chunks(self, chunks: Iterable[Chunk]) -> WriteReport: ...

    def delete_chunks(self, chunk_ids: Iterable[str]) -> int:
        """Delete by ID; returns how many existed."""

    def get_chunk(self, id_or_prefix: str) -> Chunk:
        """By full ID or unique prefix of ≥ 8 chars; raises ChunkNotFound / AmbiguousPrefix."""

    def document_chunks(self, doc_id: str, version: str | None = None) -> list[Chunk]:
        """A document's chunks ordered by version then position (all versions if version is None)."""

    def neighbours(self, chunk: Chunk, n: int) -> tuple[list[Chunk], list[Chunk]]:
        """Up to n chunks before and after, from the same doc_id and version, in order."""

    def chunk_keys(self) -> list[tuple[str, str, str]]:
        """(chunk_id, doc_id, version) of every stored chunk: for verify and repair."""

    def iter_chunks(self) -> Iterable[Chunk]:
        """Every stored chunk (for verify)."""

    def search(
        self,
        query: str,
        labels: Sequence[str],
        as_of: date | None,
        top: int = 5,
        doc_id: str | None = None,
        role: str | None = None,
    ) -> list[Hit]:
        """BM25 top ``top``; access in ``labels`` and the as-of range filter inside the query."""

    def counts(self) -> dict[str, dict[str, int]]:
        """{"access": {...}, "status": {...}, "format": {...}, "version": {...}} over chunks, plus
        "totals": {"chunks": n, "documents": n}."""

    # --- access ------------------------------------------------------------
    def reconcile_access(
        self, roles: Mapping[str, Sequence[str]] | None = None, *, check: bool = False, full: bool = False
    ) -> list[str]:
        """Make what each role can read match ``roles`` (default: the store's settings) before
        anything else in a run; one line per change made (``check``: per mismatch, nothing
        changed; ``full``: the run rebuilds everything). Raises StoreConfigError when the store
        cannot be used safely as it is. A store whose access does not live in its layout
        (SQLite) returns []."""

    # --- run metadata -----------------------------------------------------
    def get_meta(self) -> dict[str, str]: ...

    def set_meta(self, values: dict[str, str]) -> None: ...
