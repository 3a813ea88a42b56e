"""The Python API other services use (exported from ``ingest``): opening a store, searching it as a
role on a date (role → labels resolved here), running a corpus into it.

Like the CLI, it is an edge: configuration is resolved here (ingest.config) and passed down.

    import ingest

    with ingest.open_store("http://127.0.0.1:9200", prefix="kb") as index:
        for hit in index.search("warranty period", role="partner", as_of="2025-08-01", top=5):
            print(hit.chunk.citation(), hit.score)

Role → access labels: the roles the index was built with (stored by ``ingest run`` from
ingest.toml's ``[roles]``), else the default roles; an unknown role is :class:`UnknownRole`.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ingest.config import Config, ConnectionConfig, ConnectionRequest, load, resolve
from ingest.model import Chunk, Hit
from ingest.settings import ChunkSettings, Settings, chunking_with, roles_from_meta
from ingest.store.base import QueryTooLarge

if TYPE_CHECKING:
    from ingest.corpus import FolderAhead
    from ingest.pipeline import RunResult
    from ingest.store.base import Access, Counts, Store

AsOf = date | str | None
TODAY = "today"
ANY = "any"


def parse_as_of(value: str | None) -> date | None:
    """None or "today" → today; "any" → no date filter; else a YYYY-MM-DD date. Nothing else: not
    "none"/"None" (what ``str(None)`` gives a service by mistake), "all", "ANY" or "Today", and no other
    ISO form: which day "20260101" or "2026-W01-1" means is never guessed (ValueError)."""
    if value is None or value == TODAY:  # " 2026-01-01 " is not guessed at either
        return date.today()
    if value == ANY:
        return None
    if not is_plain_date(value):
        raise ValueError(f"{value!r} is not a YYYY-MM-DD date")
    return date.fromisoformat(value)


def is_plain_date(value: str) -> bool:
    """Exactly YYYY-MM-DD, ASCII digits, nothing around it (``date.fromisoformat`` takes "20260101")."""
    return re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", value) is not None


class UnknownRole(ValueError):
    """A role neither the index nor the default roles know (exit 2 in the CLI)."""


# Elasticsearch turns every word (repeated ones too) into clauses per searched field and refuses a
# query over its clause limit (1024 and up, depending on the heap); far more than any question needs.
MAX_QUERY_WORDS = 256
MAX_QUERY_CHARS = 4096  # a question, not a document: also bounds the query analysis on both stores


def check_query(query: str) -> None:
    """Refuse a query Elasticsearch would refuse, before sending it, for both stores alike."""
    words = query.split()
    if len(words) > MAX_QUERY_WORDS:
        raise QueryTooLarge(f"the query has {len(words)} words; at most {MAX_QUERY_WORDS} are searched (shorten it)")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryTooLarge(
            f"the query has {len(query)} characters; at most {MAX_QUERY_CHARS} are searched (shorten it)"
        )


# As `ingest search --top`: Elasticsearch refuses pages past its result window (10,000) anyway.
MAX_TOP = 1000


def _underlying(store: Store | Index) -> Store:
    # The documented functions take what open_store returns (an Index) as well as a bare Store.
    return store.store if isinstance(store, Index) else store


def roles_of(store: Store | Index) -> dict[str, tuple[str, ...]]:
    """role -> access labels: what the index was built with, else the default roles."""

    return recorded_roles(_underlying(store), _underlying(store).get_meta())


def recorded_roles(store: Store, meta: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """The roles ``meta`` records (else the defaults); a StoreError names a value changed outside ingest."""
    from ingest.store.base import StoreError

    try:
        return roles_from_meta(meta, Settings())
    except ValueError as exc:
        raise StoreError(
            f"{store.name}: its run metadata is damaged ({exc}): searches cannot know the roles; "
            "the next `ingest run` records them again"
        ) from None


def labels_for_role(store: Store | Index, role: str, *, meta: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The access labels ``role`` may read in ``store`` (an :class:`Index` from :func:`open_store`, or a
    Store); UnknownRole names the known roles. ``meta``: the run metadata, already read."""

    if not isinstance(role, str):
        raise TypeError(f"role must be a string, not {type(role).__name__}: {role!r}")
    underlying = _underlying(store)
    meta = underlying.get_meta() if meta is None else meta
    if "roles" not in meta:
        # Credentials that may not read the run metadata (a reader limited to its role alias) cannot
        # know the roles the index was built with: the default roles' labels would narrow the alias
        # (public → "public" only, where the build's public reads "open" too). Its alias bounds it.
        behind_alias = getattr(underlying, "labels_behind_role_alias", None)
        found = behind_alias(role) if behind_alias is not None else None
        if found is not None:
            return tuple(found)
    roles = recorded_roles(underlying, meta)
    if role not in roles:
        known = f"{'roles in this index' if 'roles' in meta else 'default roles'}: {', '.join(sorted(roles))}"
        hint = " (the default; pass --role)" if role == "public" else ""
        raise UnknownRole(f"unknown role {role!r}{hint}; {known}")
    return roles[role]


def recorded_labels(store: Store | Index, *, meta: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """Every access label the index was built with (its labels and its roles' labels), or None when
    the run metadata is not readable with these credentials or records no roles."""
    meta = _underlying(store).get_meta() if meta is None else meta
    if "roles" not in meta:
        return None
    labels = {label for labels in recorded_roles(_underlying(store), meta).values() for label in labels}
    try:
        listed = json.loads(meta.get("labels", "[]"))
    except ValueError:
        return None  # unreadable metadata: the query checks the role's labels itself
    if not isinstance(listed, list) or not all(isinstance(label, str) for label in listed):
        return None
    return tuple(sorted(labels | set(listed)))


def as_of_date(value: AsOf) -> date | None:
    """``date`` as is; a ``datetime`` → its date; "today" (the default) → today; "any"/None → no date
    filter; "YYYY-MM-DD"."""
    if isinstance(value, datetime):  # a datetime is a date: its day, the same on both stores
        return value.date()
    if value is None or isinstance(value, date):
        return value
    if not isinstance(value, str):
        # 20260101 is not a date: never guess which day a number means.
        raise TypeError(
            f"as_of must be a datetime.date, a 'YYYY-MM-DD' string, 'today', 'any' or None, "
            f"not {type(value).__name__}: {value!r}"
        )
    try:
        return parse_as_of(value)
    except ValueError:
        raise ValueError(f"as_of {value!r} is not a YYYY-MM-DD date, 'today' or 'any' (lower case)") from None


def check_search_arguments(query: object, role: object, top: object, doc_id: object) -> None:
    """Refuse arguments of the wrong type or range here, naming the argument, before the store
    turns them into a misleading error (or, for top=-1, into every chunk)."""
    for name, value in (("query", query), ("role", role)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a string, not {type(value).__name__}: {value!r}")
    if doc_id is not None and not isinstance(doc_id, str):
        raise TypeError(f"doc_id must be one doc_id string or None, not {type(doc_id).__name__}: {doc_id!r}")
    if doc_id == "":  # an unset variable ("--doc-id $ID"), never "every document" (that is None)
        raise ValueError("doc_id must be a doc_id, not an empty string (None: every document)")
    if isinstance(top, bool) or not isinstance(top, int):
        raise TypeError(f"top must be an integer from 1 to {MAX_TOP}, not {type(top).__name__}: {top!r}")
    if not 1 <= top <= MAX_TOP:
        raise ValueError(f"top must be from 1 to {MAX_TOP} (how many hits), not {top}")


class Index:
    """An open store with role-aware reads. Use as a context manager, or call :meth:`close`."""

    def __init__(self, store: Store, config: ConnectionConfig | None = None) -> None:
        self.store = store  # the underlying ingest.store.base.Store
        self.config = config
        self._labels: dict[str, tuple[str, ...]] = {}
        self._recorded: tuple[str, ...] | None = None  # every label the index records (None: unknown)
        self._state: object = None  # the store's read_state when _labels were resolved

    @property
    def name(self) -> str:
        return self.store.name

    def labels_for(self, role: str) -> tuple[str, ...]:
        # Resolved once per state of the store: a run that narrowed [roles], or a --full rebuild
        # that replaced the SQLite file, is followed by the next read of an Index kept open.
        state = self.store.read_state()
        if state != self._state:
            self._labels.clear()
            self._state = state
        if role not in self._labels:
            meta = self.store.get_meta()  # one read for both
            self._labels[role] = labels_for_role(self.store, role, meta=meta)
            self._recorded = recorded_labels(self.store, meta=meta)
        return self._labels[role]

    def access_for(self, role: str) -> Access:
        """The role, the labels it may read and the recorded labels it may not, resolved once here
        for the store's search."""
        from ingest.store.base import Access

        labels = self.labels_for(role)
        recorded = self._recorded
        withheld = None if recorded is None else tuple(sorted(set(recorded) - set(labels)))
        return Access(labels, role, withheld)

    def search(
        self, query: str, *, role: str = "public", as_of: AsOf = TODAY, top: int = 5, doc_id: str | None = None
    ) -> list[Hit]:
        """BM25 top ``top`` that ``role`` may read, in force on ``as_of`` (default today; None or
        "any": every date). The same hits, in the same order, as ``ingest search``."""
        check_search_arguments(query, role, top, doc_id)
        check_query(query)
        day = as_of_date(as_of)
        from ingest.store.base import NoIngestIndex

        access = self.access_for(role)
        try:
            hits: list[Hit] = self.store.search(query, access, day, top=top, doc_id=doc_id)
        except NoIngestIndex:  # e.g. the alias of a role that a run removed since it was resolved
            fresh = self._resolved_again(role)
            if fresh.labels == access.labels:
                raise
            hits = self.store.search(query, fresh, day, top=top, doc_id=doc_id)
        else:
            fresh = self._resolved_again(role) if not hits else access
            if fresh.labels != access.labels:
                hits = self.store.search(query, fresh, day, top=top, doc_id=doc_id)
        if not hits:
            from ingest.store import require_ingest_index

            require_ingest_index(self.store, role)
        return hits

    def _resolved_again(self, role: str) -> Access:
        """``role`` resolved again from what the store records now, after a search found nothing or
        failed. Elasticsearch tracks no read state (:meth:`labels_for`): an Index kept open would
        search a role a run has removed since — its alias gone ("no such alias"), or nothing for a role
        that read no label — instead of refusing it as any unknown role is refused (UnknownRole, raised
        here), and a role whose labels changed with its old ones. Only here: a search that finds
        something costs no second request."""
        self._labels.pop(role, None)
        return self.access_for(role)

    def chunks(self, doc_id: str, version: str | None = None) -> list[Chunk]:
        for name, value in (("doc_id", doc_id), ("version", version)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a string, not {type(value).__name__}: {value!r}")
        found: list[Chunk] = self.store.document_chunks(doc_id, version)
        return found

    def chunk(self, chunk_id: str) -> Chunk:
        found: Chunk = self.store.get_chunk(chunk_id)
        return found

    def stats(self) -> Counts:
        return self.store.counts()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(
    url: str | None = None,
    prefix: str | None = None,
    *,
    cloud_id: str | None = None,
    ca_certs: str | None = None,
    ssl_assert_fingerprint: str | None = None,
    verify_certs: bool = True,
    timeout: float | None = None,
    create: bool = True,
) -> Index:
    """Open the store ``url`` names (``sqlite:///PATH`` or ``http(s)://host:9200``); None: the
    environment, as the CLI resolves it (INGEST_STORE, ELASTIC_CLOUD_ID, ELASTICSEARCH_URL, …).
    Credentials come from ES_API_KEY / ELASTIC_API_KEY or ES_USERNAME/ES_PASSWORD.
    ``create=False``: a missing SQLite file is an error instead of a new empty store.
    Raises StoreUnavailable when the store cannot be reached, ConfigError for a bad URL or option."""
    from ingest.store import open_store as _open

    config = resolve(ConnectionRequest(url, prefix, cloud_id, ca_certs, ssl_assert_fingerprint, verify_certs, timeout))
    store = _open(config, create=create)
    try:
        store.check()  # fail here, not on the first search: unreachable, refused, or no such file
    except BaseException:
        store.close()
        raise
    return Index(store, config)


@dataclass(frozen=True)
class RunOptions:
    """What a run is asked to do beyond where (the corpus) and which store: see :func:`run`."""

    full: bool = False
    dry_run: bool = False
    accept_edits: bool = False
    lock_wait_s: float = 0.0
    allow_empty: bool = False
    strict: bool = False  # write nothing but withdrawals when any document is rejected


def run_pipeline(
    corpus: Path,
    target: Store,
    settings: Settings,
    chunking: ChunkSettings,
    config: Config,
    options: RunOptions,
    *,
    on_file: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    ahead: FolderAhead | None = None,
) -> RunResult:
    """``pipeline.run`` with the options and the configuration's tuning: the one call the API and the CLI make.
    ``ahead``: the folder listed and hashed in a thread the caller started (:func:`read_folder_ahead`)."""
    from ingest import pipeline

    # RunOptions' fields are pipeline.run's keyword arguments, by name.
    return pipeline.run(
        corpus,
        target,
        settings,
        chunking,
        **dataclasses.asdict(options),
        on_file=on_file,
        progress=progress,
        workers=config.workers,
        write_batch_chunks=config.write_batch_chunks,
        parser_memory_limit=None if config.parser_memory_mb is None else config.parser_memory_mb << 20,
        parser_timeout_s=config.parser_timeout_s,
        ahead=ahead,
    )


def read_folder_ahead(corpus: Path, options: RunOptions) -> FolderAhead | None:
    """Start listing and hashing the folder in a thread, for a run that will use it (an
    incremental one): a caller that opens the store next (importing its client, waiting for its
    answers) finds the hashes ready instead of reading the files after it."""
    if options.full or options.dry_run:
        return None
    from ingest.corpus import FolderAhead

    return FolderAhead(corpus)


def unchanged_run(
    corpus: Path,
    connection: ConnectionConfig,
    settings: Settings,
    chunking: ChunkSettings,
    options: RunOptions,
    ahead: FolderAhead | None,
) -> RunResult | None:
    """An unchanged incremental run on Elasticsearch, decided and reported without importing the client
    (ingest.store.elasticsearch.unchanged_check); None: run the pipeline (nothing was written)."""
    if connection.kind != "elasticsearch" or ahead is None:
        return None
    from ingest.store.elasticsearch.unchanged_check import unchanged_run as check

    return check(corpus, connection, settings, chunking, options, ahead)


def run(
    corpus: str | Path,
    store: Index | str | None = None,
    *,
    full: bool = False,
    dry_run: bool = False,
    chunker: str | None = None,
    size: int | None = None,
    overlap: int | None = None,
    accept_edits: bool = False,
    wait_s: float = 0.0,
    allow_empty: bool = False,
    strict: bool = False,
    workers: int | None = None,
    write_batch_chunks: int | None = None,
) -> RunResult:
    """Validate, chunk and write ``corpus`` into ``store`` (an :class:`Index`, a URL, or None for
    the environment's store); returns the RunResult (``.ok``, ``.to_json()``, same as ``ingest run --json``).
    ``workers`` / ``write_batch_chunks`` (None: INGEST_WORKERS / INGEST_WRITE_BATCH_CHUNKS, else the defaults)."""
    from ingest.settings import load_settings
    from ingest.store import open_store as _open

    corpus = Path(corpus)
    settings = load_settings(corpus)
    chunking = chunking_with(settings.chunking, chunker, size, overlap, "arguments")
    if isinstance(store, Index) and store.config is None:
        target, owned, connection = store.store, False, None
    else:
        # The store is opened with this corpus's settings (its labels and roles shape the layout).
        connection = store.config if isinstance(store, Index) else resolve(store)
        target, owned = _open(connection, settings=settings), True
    config = load(connection, workers=workers, write_batch_chunks=write_batch_chunks)
    options = RunOptions(
        full=full,
        dry_run=dry_run,
        accept_edits=accept_edits,
        lock_wait_s=wait_s,
        allow_empty=allow_empty,
        strict=strict,
    )
    try:
        return run_pipeline(corpus, target, settings, chunking, config, options)
    finally:
        if owned:
            target.close()
        if isinstance(store, Index):
            store._labels.clear()  # the run may have changed the roles


__all__: Sequence[str] = (
    "Index",
    "QueryTooLarge",
    "UnknownRole",
    "check_query",
    "check_search_arguments",
    "as_of_date",
    "labels_for_role",
    "open_store",
    "roles_of",
    "run",
)
