"""What every store offers, as two small protocols (what the pipeline writes through, what readers
use), and the rules both stores share: errors, chunk-ID prefixes, counts, batching, lock polling.

Both stores must give the same records, the same counts and the same filter results for the same
calls; only scores differ (tests/test_store_contract.py checks it against both).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Protocol, TypedDict, TypeVar

from ingest.model import MIN_PREFIX, Chunk, DocKey, DocumentRecord, Hit, chunk_id_prefix
from ingest.settings import Settings, roles_from_meta, roles_to_meta

T = TypeVar("T")

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


class NoIngestIndex(StoreUnavailable):
    """The store answers but `ingest run` never wrote there (wrong prefix, wrong cluster), or an
    index or alias a reader needs is gone: exit 3, never an empty answer."""


class StoreConfigError(StoreError):
    """The store named cannot be used as given (unknown scheme, bad prefix): a usage error (exit 2)."""


class StoreLocked(StoreError):
    """Another run holds the write lock on this store/prefix (exit 2)."""


class QueryTooLarge(StoreConfigError):
    """A search query with more distinct terms than the store can run: a usage error (exit 2)."""


class ChunkNotFound(StoreError):
    """No chunk has that ID (or the text is no chunk ID at all)."""


class AmbiguousPrefix(StoreError):
    """A chunk-ID prefix that more than one chunk starts with."""

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
    """What one write_chunks call wrote, and what the store refused."""

    written: int = 0
    errors: list[ItemError] = field(default_factory=list)


@dataclass(frozen=True)
class Access:
    """Who reads: the role and the access labels it may read, resolved once (ingest.api) and then
    passed whole, so no store resolves a role itself. Elasticsearch reads through the role's alias
    and filters by the labels; SQLite filters by the labels.

    ``withheld``: the other labels the index records (labels this role may not read), or None when
    they cannot be known (credentials that may not read the run metadata). Elasticsearch excludes
    them inside the query, which costs nothing where none is present; the role alias's own filter
    (the role's labels, applied by Elasticsearch inside the same query) keeps out any label the
    index does not record. None: the query checks the role's labels itself."""

    labels: tuple[str, ...]
    role: str | None = None
    withheld: tuple[str, ...] | None = None


def as_access(access: Access | Sequence[str], role: str | None = None) -> Access:
    """An Access from the older ``search(query, labels, …, role=…)`` form (kept until every caller
    passes an Access)."""
    if isinstance(access, Access):
        return access
    return Access(tuple(access), role)


class SearchEntry:
    """``search`` as both stores offer it: one :class:`Access`, or the older form (labels plus
    ``role=``) kept here, in one place, until every caller passes an Access. A store implements
    ``_search``."""

    def search(
        self,
        query: str,
        access: Access | Sequence[str],
        as_of: date | None,
        top: int = 5,
        doc_id: str | None = None,
        role: str | None = None,
    ) -> list[Hit]:
        """BM25 top ``top``; the access labels and the as-of range filter inside the query."""
        if isinstance(as_of, datetime):  # its day: SQLite compared it as text, Elasticsearch refused it
            as_of = as_of.date()
        return self._search(query, as_access(access, role), as_of, top, doc_id)

    def _search(self, query: str, access: Access, as_of: date | None, top: int, doc_id: str | None) -> list[Hit]:
        raise NotImplementedError

    def read_state(self) -> object:
        """See :meth:`StoreReader.read_state`: None here (nothing tracked)."""
        return None


class Totals(TypedDict):
    chunks: int
    documents: int


class Counts(TypedDict):
    """Chunks per access label, status, format and version, and the totals of chunks and records."""

    access: dict[str, int]
    status: dict[str, int]
    format: dict[str, int]
    version: dict[str, int]
    totals: Totals


# The run metadata a store keeps (chunker, size, overlap, parser_version, built_at, labels, roles,
# analysis: see ingest.pipeline): string values, since older stores may hold other keys too.
Meta = dict[str, str]


def role_map_changes(
    recorded: Mapping[str, Sequence[str]], roles: Mapping[str, Sequence[str]], *, check: bool
) -> list[str]:
    """How a stored role map (role -> the labels a search of that role reads) differs from ``roles``
    ([roles]): one line per role added or removed and per label a role gains or loses, worded as a
    difference (``check``) or as the change made. SQLite's role map is these roles; Elasticsearch
    records them too (what `stats` shows and a search resolves its role to, each line after
    "recorded roles: "), its role aliases being compared label index by label index
    (layout_rules.alias_plan) in the same words."""
    changes: list[str] = []
    for role in sorted({*recorded, *roles}):
        if role not in roles:
            changes.append(
                f"role {role!r} of the store is not in [roles]"
                if check
                else f"removed role {role!r} from the store (not in [roles])"
            )
            continue
        had = list(recorded.get(role, ()))
        if role not in recorded:
            listed = ", ".join(map(repr, roles[role])) or "no label"
            changes.append(
                f"role {role!r} is not in the store ([roles] lets it read {listed})"
                if check
                else f"added role {role!r} to the store (reads {listed})"
            )
            continue
        for label in (label for label in had if label not in roles[role]):
            why = f"[roles] does not let {role!r} read {label!r}"
            changes.append(
                f"role {role!r} reads {label!r} in the store ({why})"
                if check
                else f"role {role!r} no longer reads {label!r} ({why})"
            )
        for label in (label for label in roles[role] if label not in had):
            changes.append(
                f"role {role!r} cannot read {label!r} in the store ([roles] lets it)"
                if check
                else f"role {role!r} now reads {label!r} ([roles] lets it)"
            )
    return changes


class _MetaWriter(Protocol):
    def set_meta(self, values: Mapping[str, str]) -> None: ...


def follow_recorded_roles(
    store: _MetaWriter, meta: Mapping[str, str], fallback: Settings, roles: Mapping[str, Sequence[str]], *, check: bool
) -> list[str]:
    """The roles a store records in its meta (``fallback``'s when none) made to match ``roles``: the
    :func:`role_map_changes` lines, written unless ``check``."""
    try:
        recorded = roles_from_meta(meta, fallback)
    except ValueError:  # changed outside ingest: the run records its roles again
        recorded = {}
    changes = role_map_changes(recorded, roles, check=check)
    if (changes or not recorded) and not check:
        store.set_meta({"roles": roles_to_meta(roles)})
    return changes


def lookup_prefix(id_or_prefix: str) -> str:
    """The chunk-ID lookup key for a full ID or a prefix of MIN_PREFIX+ hex characters
    (:func:`ingest.model.chunk_id_prefix`); anything else is ChunkNotFound."""
    wanted = chunk_id_prefix(id_or_prefix)
    if wanted is None:
        raise ChunkNotFound(f"{id_or_prefix!r} is not a chunk ID or a prefix of {MIN_PREFIX}+ hex characters")
    return wanted


def batched(items: Iterable[T], limit: int, weight: Callable[[T], int] = lambda _: 1) -> Iterator[list[T]]:
    """Consecutive batches of ``items`` whose weights (default: 1 each) add up to at least ``limit``
    (the last one may weigh less); every item is in exactly one batch, in order."""
    batch: list[T] = []
    size = 0
    for item in items:
        batch.append(item)
        size += weight(item)
        if size >= limit:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def poll_until(
    attempt: Callable[[], T | None], wait_s: float, refusal: Callable[[], Exception], every_s: float = 1.0
) -> T:
    """Call ``attempt`` until it gives something (a lock taken), for up to ``wait_s`` seconds; then
    raise ``refusal()``. Both stores' locks wait this way."""
    deadline = time.monotonic() + max(0.0, wait_s)
    while True:
        result = attempt()
        if result is not None:
            return result
        if time.monotonic() >= deadline:
            raise refusal()
        time.sleep(min(every_s, max(0.05, deadline - time.monotonic())))


class StoreReader(Protocol):
    """What `search`, `show`, `stats` and the library's Index read (never writes)."""

    name: str  # for messages and JSON: "sqlite:///…" or "http://…"

    def check(self) -> None:
        """Raise StoreUnavailable if the store cannot be reached or read. Writes nothing."""

    def close(self) -> None: ...

    def read_state(self) -> object:
        """A value that changes when what the store holds may have changed since the last call (SQLite:
        the file at its path, reopened if a rebuild replaced it, and its data_version), so that a
        long-lived reader resolves roles again; Elasticsearch: a new value each call, so that roles are
        resolved again before each search; None: not tracked)."""

    def search(
        self, query: str, access: Access, as_of: date | None, top: int = 5, doc_id: str | None = None
    ) -> list[Hit]:
        """BM25 top ``top``; the access labels and the as-of range filter inside the query."""

    def get_chunk(self, id_or_prefix: str) -> Chunk:
        """By full ID or unique prefix of ≥ 8 hex chars; raises ChunkNotFound / AmbiguousPrefix."""

    def neighbours(self, chunk: Chunk, n: int) -> tuple[list[Chunk], list[Chunk]]:
        """Up to n chunks before and after, from the same doc_id and version, in order."""

    def document_chunks(self, doc_id: str, version: str | None = None) -> list[Chunk]:
        """A document's chunks ordered by version then position (all versions if version is None)."""

    def counts(self) -> Counts: ...

    def get_meta(self) -> Meta: ...


class StoreWriter(Protocol):
    """What a run writes through (the pipeline), in this order per batch of document versions, so
    that a crash at any point leaves something ``repair`` can finish or roll back:
      1. ``write_chunks`` (new chunks; harmless orphans until their record exists)
      2. ``put_documents`` (the records, listing their chunk IDs, make them live)
      3. ``delete_chunks`` for what the new records replace; then, for versions that left the
         folder, ``delete_documents`` and their ``delete_chunks``.
    What a run wrote is searchable once its lock is released (no refresh to call)."""

    name: str
    # How new indices analyse text for BM25 (from [search] language): recorded in the meta as
    # "analysis"; a store whose recorded analysis differs is rebuilt.
    analysis: str

    def check(self) -> None:
        """Raise StoreUnavailable if the store cannot be reached. Writes nothing (no file, no index)."""

    def close(self) -> None: ...

    def lock(self, owner: str, wait_s: float = 0.0) -> AbstractContextManager[None]:
        """Exclusive write lock for one run; raises StoreLocked. A lock older than its TTL expires."""

    def full_rebuild(self) -> AbstractContextManager[StoreWriter]:
        """A fresh, empty store to fill; on clean exit it atomically replaces this one
        (new SQLite file renamed over the old; new ES indices behind moved aliases).
        On an exception the old store stays as it was."""

    def reconcile_access(
        self, roles: Mapping[str, Sequence[str]] | None = None, *, check: bool = False, full: bool = False
    ) -> list[str]:
        """Make what each role can read match ``roles`` (default: the store's settings) before
        anything else in a run; one line per change made (``check``: per mismatch, nothing
        changed; ``full``: the run rebuilds everything). Raises StoreConfigError when the store
        cannot be used safely as it is. The roles the store records (its meta ``roles``: what
        `stats` shows, what a search resolves its role to) follow ``roles`` too."""

    # --- the sync state ---------------------------------------------------------------------------
    def documents(self) -> list[DocumentRecord]: ...

    def chunk_keys(self) -> list[tuple[str, str, str]]:
        """(chunk_id, doc_id, version) of every stored chunk: for verify and repair."""

    def iter_chunks(self) -> Iterable[Chunk]:
        """Every stored chunk (for verify)."""

    def document_chunks(self, doc_id: str, version: str | None = None) -> list[Chunk]: ...

    def counts(self) -> Counts: ...

    # --- writes -----------------------------------------------------------------------------------
    def write_chunks(self, chunks: Iterable[Chunk]) -> WriteReport: ...

    def put_documents(self, records: Iterable[DocumentRecord]) -> None:
        """Many records at once (one bulk request per few MB)."""

    def delete_chunks(self, chunk_ids: Iterable[str]) -> int:
        """Delete by ID; returns how many existed."""

    def delete_documents(self, keys: Iterable[DocKey | str]) -> None:
        """Delete records (not their chunks: see delete_chunks)."""

    def get_meta(self) -> Meta: ...

    def set_meta(self, values: Mapping[str, str]) -> None: ...


class Store(StoreReader, StoreWriter, Protocol):
    """Both sides, as each store implements them, plus the older forms kept until every caller
    has moved (the lead drops them after the merge): ``put_document``, ``delete_document``,
    and, in both
    stores (not here), ``search(query, labels, as_of, …, role=…)`` beside ``search(query, Access(…), …)``."""

    def full_rebuild(self) -> AbstractContextManager[Store]: ...

    def put_document(self, record: DocumentRecord) -> None: ...

    def delete_document(self, doc_id: str, version: str) -> None: ...
