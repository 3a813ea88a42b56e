"""ElasticsearchStore: the reads and writes of chunks, document records and run metadata, on top of
the layout, lock, rebuild and transport modules of this package."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date
from typing import Any

from elasticsearch import AuthorizationException, Elasticsearch

from ingest.model import Chunk, DocKey, DocumentRecord, Hit
from ingest.settings import Settings
from ingest.store.base import (
    Access,
    AmbiguousPrefix,
    ChunkNotFound,
    Counts,
    NoIngestIndex,
    SearchEntry,
    StoreError,
    StoreLocked,
    WriteReport,
    follow_recorded_roles,
    lookup_prefix,
)
from ingest.store.elasticsearch import rebuild, writes
from ingest.store.elasticsearch.layout import IndexLayout
from ingest.store.elasticsearch.layout_rules import META_ID, analyzer_for
from ingest.store.elasticsearch.lock import LOCK_TTL_S, LockGuard, WriteLock
from ingest.store.elasticsearch.names import IndexNames, check_names
from ingest.store.elasticsearch.query import (
    SEARCH_TYPE,
    check_query_size,
    neighbours_query,
    prefix_query,
    search_body,
)
from ingest.store.elasticsearch.transport import (
    DEFAULT_TIMEOUT_S,
    RECORDS_PAGE,
    SHORT_TIMEOUT_S,
    Action,
    Transport,
    connect,
    without_credentials,
)

COUNTED_FIELDS = ("access", "status", "version")


def readable(source: Any, labels: Sequence[str]) -> bool:
    """A hit the role may read: its ``access`` is one label of the role's (not missing, not a list)."""
    return isinstance(source, dict) and isinstance(source.get("access"), str) and source["access"] in labels


class ElasticsearchStore(IndexNames, SearchEntry):
    """Chunks, document records and run metadata in Elasticsearch (see :mod:`ingest.store.elasticsearch`).

    Index and alias names (``all_alias``, ``role_alias()``, …) come from :class:`IndexNames`."""

    def __init__(
        self,
        url: str,
        prefix: str = "ingest",
        settings: Settings | None = None,
        *,
        analyzer: str | None = None,
        lock_ttl_s: float = LOCK_TTL_S,
        max_retries: int = 5,
        initial_backoff: float = 0.5,
        request_timeout: float = 30.0,
        timeout: float = DEFAULT_TIMEOUT_S,
        client: Elasticsearch | None = None,
        build: str | None = None,
        write_lock: WriteLock | None = None,
    ):
        super().__init__(prefix)
        self.url = url.rstrip("/")
        self.name = without_credentials(self.url)
        self.settings = settings or Settings()
        check_names(prefix, self.settings)
        self.analyzer = analyzer or analyzer_for(self.settings)
        self.analysis = self.analyzer
        self.timeout = timeout
        self._owns_client = client is None
        self._client = client or connect(self.url, min(request_timeout, timeout))
        self._t = Transport(
            self._client,
            self.name,
            prefix,
            timeout=timeout,
            max_retries=max_retries,
            initial_backoff=initial_backoff,
            before_write=self._assert_lock,
        )
        # The rebuild's store shares the live store's lock: its writes check the same lease.
        self._lock = write_lock or WriteLock(self._t, self.meta_index, prefix, lock_ttl_s)
        self._layout = IndexLayout(self._t, self, self.settings, self.analyzer, self._assert_lock)
        # A pinned build: this object writes to and reads from that build's concrete indices
        # (used inside full_rebuild). None: the live layout behind the aliases.
        self._build = build
        self._label_index: dict[str, str] | None = None  # label -> concrete index, once known
        self._documents_index: str | None = None
        self._meta_forbidden = False  # these credentials were refused the run metadata (a role-alias reader)
        # Problems after the writes (lock release, final refresh): reported, counts intact.
        self.warnings: list[str] = []
        # What the run's lock repaired of the layout (a label index deleted outside ingest, recreated).
        self.layout_repairs: list[str] = []

    @property
    def es(self) -> Elasticsearch:
        """The client for one request within the current operation's deadline."""
        return self._t.es

    @property
    def _guard(self) -> LockGuard | None:
        return self._lock.guard

    def _assert_lock(self) -> None:
        self._lock.check()

    def _chunks_read_target(self, role: str | None = None) -> str:
        if self._build is None:
            return self.role_alias(role) if role else self.all_alias
        labels = self.settings.labels_for_role(role) if role else self.settings.labels
        return ",".join(self.chunk_index(label, self._build) for label in labels)

    def _documents_read_target(self) -> str:
        return self.documents_alias if self._build is None else self.documents_index(self._build)

    # --- lifecycle -----------------------------------------------------------------------------
    def check(self) -> None:
        """Raise StoreUnavailable if the cluster does not answer. Writes nothing."""
        try:
            self._t.quick().cluster.health()
        except AuthorizationException:
            # Answered and authenticated: credentials that may read a role alias only (the
            # real-world reader) lack the cluster privilege `monitor`; what they may read decides.
            return
        except Exception as exc:  # noqa: BLE001 - every failure becomes one clear message
            raise self._t.unavailable(exc) from None

    def close(self) -> None:
        try:
            self._refresh_at_end("the final refresh failed")
        finally:
            if self._owns_client:
                self._client.close()

    def read_state(self) -> object:
        """A new value on every call: Elasticsearch has no cheap "changed since" to ask, so the library's
        Index resolves a role's labels again before each search (one read of the run metadata, about a
        millisecond). An Index that reused them for a second let a role a run had just narrowed read the
        label taken from it, when someone added that label's index to the role's alias by hand without
        its filter within that second (attack pass, session 17); the recorded roles read with each
        search keep it out (a search never relies on the alias's filter alone)."""
        return object()

    def refresh(self) -> None:
        """Make every write so far searchable. The store does this itself (before its own reads, at
        lock release and close); kept callable for callers written before that."""
        self._t.refresh()

    def _refresh_at_end(self, what: str) -> None:
        try:
            with self._t.operation(min(SHORT_TIMEOUT_S, self.timeout)):
                self._t.refresh()
        except StoreError as exc:
            self.warnings.append(f"{what} ({exc}); Elasticsearch makes the writes searchable at its next refresh")

    def ensure_layout(self) -> None:
        """Create what is missing of the layout (see IndexLayout.ensure); once per store object."""
        if self._label_index is not None:
            return
        if self._build is not None:
            self._t.call(self._layout.ensure_meta_index)
            self._label_index, self._documents_index = self.build_indices(self.settings.labels, self._build)
            return
        layout = self._layout.ensure(fill=self._guard is not None)  # created under the lock: filled refresh off
        self._label_index, self._documents_index = layout.chunks, layout.documents

    def reconcile_access(
        self, roles: Mapping[str, Sequence[str]] | None = None, *, check: bool = False, full: bool = False
    ) -> list[str]:
        """Make every alias of this prefix exactly what ``roles`` allows, in one atomic call, then the
        roles the run metadata records (what `stats` shows, what a search resolves its role to)."""
        roles = self.settings.roles if roles is None else roles
        changes = self._layout.reconcile_access(roles, check=check, full=full)
        return changes + self._follow_recorded_roles(roles, check=check)

    def _follow_recorded_roles(self, roles: Mapping[str, Sequence[str]], *, check: bool) -> list[str]:
        """The recorded roles made to match ``roles``, one line per difference (``check``: reported
        only). Nothing recorded yet (no run, or metadata these credentials may not read): nothing to follow."""
        meta = self.get_meta()  # read along with the layout just now
        if "roles" not in meta:
            return []
        changes = follow_recorded_roles(self, meta, self.settings, roles, check=check)
        return [f"recorded roles: {line}" for line in changes]

    # --- lock and rebuild ----------------------------------------------------------------------
    @contextmanager
    def lock(self, owner: str, wait_s: float = 0.0) -> Iterator[None]:
        """The write lock of this prefix for one run (see :mod:`.lock`); what the run wrote is
        searchable when it is released."""
        if self._build is not None:
            raise StoreError("lock() is taken on the live store, not inside full_rebuild()")
        self._t.call(self._layout.ensure_meta_index)
        guard = self._lock.acquire(owner, wait_s)
        self._layout.created.clear()  # "created empty by this run" counts from here (see write_chunks)
        self._layout.forget_meta()  # read before the lock: what the run reads now is read under it
        completed = False
        try:
            # A run killed before its writes were refreshed left them acknowledged but not yet
            # searchable. Refresh everything now, so this run's repair and plan read one
            # consistent state. Inside the try: if this fails, the lock is still released.
            targets = f"{self.all_alias},{self.documents_alias}"
            self._t.call(
                lambda: self.es.indices.refresh(index=targets, ignore_unavailable=True, allow_no_indices=True),
                missing=None,
            )
            layout = self._layout.read(with_meta=True)  # the run reads its metadata next, under the lock
            if layout is not None and layout.filling:
                # A run killed while filling indices with refresh off: their default refresh back.
                layout = self._layout.finish_filling(layout)
            # Half-built indices of a killed --full (recorded by this prefix, not live, in no alias
            # of ours): deleted now that no rebuild of this prefix can be running.
            try:
                dropped = self._layout.drop_abandoned_builds(layout)
            except StoreLocked:
                raise
            except StoreError as exc:  # e.g. credentials that may not delete indices: the run goes on
                dropped = []
                self.warnings.append(f"indices a killed `ingest run --full` left could not be deleted ({exc})")
            if dropped:
                self.warnings.append(
                    f"deleted {len(dropped)} index(es) a killed `ingest run --full` left: {', '.join(dropped)}"
                )
            self.layout_repairs = self._restore_missing_label_indices()
            yield
            completed = True
        finally:
            self._layout.created.clear()
            self._lock.stop_keeping()
            self._finish_filling()
            if completed:
                self._refresh_at_end("written, but the final refresh failed")
            self._lock.release(guard, self.warnings)

    def _finish_filling(self) -> None:
        """The indices this run created with refresh off get the default back before the lock goes
        (the final refresh follows); when that fails, the next run does it (the layout records them)."""
        if not self._layout.filled:
            return
        try:
            with self._t.operation(min(SHORT_TIMEOUT_S, self.timeout)):
                self._layout.finish_filling()
        except StoreError as exc:
            self.warnings.append(
                f"refresh stays off on {', '.join(sorted(self._layout.filled))} ({exc}); the next run turns it on "
                "again (until then the writes become searchable at that run)"
            )

    def _restore_missing_label_indices(self) -> list[str]:
        """A live label index deleted outside ingest (its records still list its chunks): the records
        of every version under that label are dropped (their bytes kept as withdrawn versions, so an
        edit without a version bump is still refused), then the index and its aliases are created
        again, so that this run writes those versions again from their files, as it does for the
        incomplete versions of a killed run (their chunk IDs are the same). In that order: a run killed
        in between leaves the index missing (found again by the next run) or the records gone (their
        files are new to the next run, the same bytes only), never an empty index behind records that
        list chunks."""
        layout = self._layout.read()
        if layout is None or not layout.documents:
            return []
        existing = self._layout.existing(layout.live)
        missing = {label: index for label, index in layout.chunks.items() if index not in existing}
        if not missing:
            return []
        dropped: dict[str, int] = dict.fromkeys(missing, 0)
        if layout.documents in existing:
            query = {"terms": {"access": sorted(missing)}}
            order = [{"doc_id": "asc"}, {"version": "asc"}]
            fields = ["access", "source_sha256"]
            hits = list(self._t.scan(layout.documents, query, order, source=fields, page=RECORDS_PAGE))
            for hit in hits:
                dropped[hit["_source"]["access"]] += 1
            self._remember_dropped(hits)
            actions = [{"_op_type": "delete", "_index": layout.documents, "_id": hit["_id"]} for hit in hits]
            self._bulk_or_raise(actions, "dropping record {id} (its label index is missing) failed: {reason}")
        live = self._layout.ensure(fill=True)
        self._label_index, self._documents_index = live.chunks, live.documents
        return [
            f"recreated {index} (the index of access label {label!r}, deleted outside ingest) and its aliases; "
            f"the {dropped[label]} document version(s) stored under {label!r} are written again from their files "
            "(a file edited without a version bump is refused and stays out)"
            for label, index in sorted(missing.items())
        ]

    def _remember_dropped(self, hits: list[dict[str, Any]]) -> None:
        """Before their records go, the bytes each version was indexed from are kept as withdrawn
        versions (tombstones): a file edited without a version bump is then refused by the plan as
        it would have been against its record, not written as new (the same bytes are written again)."""
        from ingest.journal import TOMBSTONES, WITHDRAWN_ACCESS, read_tombstones, tombstones_json  # pulls the parsers

        if not hits:
            return
        meta = self._stored_meta()
        kept, labels = read_tombstones(meta), read_tombstones(meta, WITHDRAWN_ACCESS)
        known = [hit for hit in hits if hit["_source"].get("source_sha256")]
        kept |= {hit["_id"]: hit["_source"]["source_sha256"] for hit in known}
        labels |= {hit["_id"]: hit["_source"]["access"] for hit in known}  # never back under another default
        self.set_meta({TOMBSTONES: tombstones_json(kept), WITHDRAWN_ACCESS: tombstones_json(labels)})

    @contextmanager
    def full_rebuild(self) -> Iterator[ElasticsearchStore]:
        """A store pinned to a new build; on clean exit every alias moves to it at once."""
        if self._build is not None:
            raise StoreError("full_rebuild() cannot be nested")
        with rebuild.full_rebuild(self._layout, self._pinned, self.warnings) as fresh:
            yield fresh
        self._label_index, self._documents_index = None, None
        self._t.dirty.clear()

    def _pinned(self, build: str) -> ElasticsearchStore:
        pinned = ElasticsearchStore(
            self.url,
            self.prefix,
            self.settings,
            analyzer=self.analyzer,
            lock_ttl_s=self._lock.ttl_s,
            max_retries=self._t.max_retries,
            initial_backoff=self._t.initial_backoff,
            timeout=self.timeout,
            client=self._client,
            build=build,
            write_lock=self._lock,
        )
        pinned._layout.created = self._layout.created  # the rebuild's indices, created by this store's layout
        return pinned

    # --- documents -----------------------------------------------------------------------------
    def documents(self) -> list[DocumentRecord]:
        order = [{"doc_id": "asc"}, {"version": "asc"}]
        hits = self._t.scan(self._documents_read_target(), {"match_all": {}}, order, page=RECORDS_PAGE)
        return [DocumentRecord.from_json(hit["_source"]) for hit in hits]

    def put_document(self, record: DocumentRecord) -> None:
        self.put_documents([record])

    def put_documents(self, records: Iterable[DocumentRecord]) -> None:
        """Many records in bounded bulk requests (a refused one raises: records are ours, not input)."""
        self.ensure_layout()
        index = self._documents_index
        actions = [{"_op_type": "index", "_index": index, "_id": r.key, "_source": r.to_json()} for r in records]
        self._bulk_or_raise(actions, "document record {id} refused: {reason}")

    def delete_document(self, doc_id: str, version: str) -> None:
        self.delete_documents([DocKey(doc_id, version)])

    def delete_documents(self, keys: Iterable[DocKey | str]) -> None:
        self.ensure_layout()
        index = self._documents_index
        actions = [{"_op_type": "delete", "_index": index, "_id": str(key)} for key in keys]
        self._bulk_or_raise(actions, "deleting record {id} failed: {reason}")

    def _bulk_or_raise(self, actions: list[Action], refused: str) -> int:
        return writes.bulk_or_raise(self._t, actions, refused)

    def chunk_source(self, chunk: Chunk) -> dict[str, Any]:
        """The stored document of a chunk (a hook for tests of refused items)."""
        return chunk.to_json()

    def write_chunks(self, chunks: Iterable[Chunk]) -> WriteReport:
        self.ensure_layout()
        assert self._label_index is not None
        # Label indices created by the run that holds the lock (a first build, a --full) hold only what
        # this run wrote: it writes each doc_id@version once, under that version's label, so no copy
        # under another label needs looking up first (two files claiming one version are both rejected
        # and their chunks deleted wherever they are). Anything else looks up every ID.
        fresh = self._guard is not None and self._layout.created.issuperset(self._label_index.values())
        return writes.write_chunks(self._t, self._label_index, chunks, self.chunk_source, look_up=not fresh)

    def delete_chunks(self, chunk_ids: Iterable[str]) -> int:
        if self._label_index is not None:
            label_index = self._label_index
        else:
            layout = self._layout.read()
            label_index = layout.chunks if layout else {}
        return writes.delete_chunks(self._t, label_index, chunk_ids)

    # --- reads ---------------------------------------------------------------------------------
    def get_chunk(self, id_or_prefix: str) -> Chunk:
        wanted = lookup_prefix(id_or_prefix)
        body = {"query": prefix_query(wanted), "size": 50, "sort": [{"chunk_id": "asc"}]}
        hits = self._t.search(self._chunks_read_target(), body)
        found = {hit["_source"]["chunk_id"]: hit["_source"] for hit in hits}
        if not found:
            raise ChunkNotFound(f"no chunk with ID {id_or_prefix!r} in {self.name} (prefix {self.prefix!r})")
        if len(found) > 1:
            raise AmbiguousPrefix(id_or_prefix, sorted(found))
        return Chunk.from_json(next(iter(found.values())))

    def document_chunks(self, doc_id: str, version: str | None = None) -> list[Chunk]:
        filters: list[dict[str, Any]] = [{"term": {"doc_id": doc_id}}]
        if version is not None:
            filters.append({"term": {"version": version}})
        order = [{"version": "asc"}, {"position": "asc"}, {"chunk_id": "asc"}]
        hits = self._t.scan(self._chunks_read_target(), {"bool": {"filter": filters}}, order)
        return [Chunk.from_json(hit["_source"]) for hit in hits]

    def neighbours(self, chunk: Chunk, n: int) -> tuple[list[Chunk], list[Chunk]]:
        if n <= 0:
            return [], []

        def around(bounds: dict[str, int], order: str) -> list[Chunk]:
            query = neighbours_query(chunk.doc_id, chunk.version, bounds)
            body = {"query": query, "size": n, "sort": [{"position": order}, {"chunk_id": order}]}
            return [Chunk.from_json(hit["_source"]) for hit in self._t.search(self._chunks_read_target(), body)]

        before = around({"gte": chunk.position - n, "lt": chunk.position}, "desc")
        after = around({"gt": chunk.position, "lte": chunk.position + n}, "asc")
        return list(reversed(before)), after

    def chunk_keys(self) -> list[tuple[str, str, str]]:
        source = ["chunk_id", "doc_id", "version"]
        hits = self._t.scan(self._chunks_read_target(), {"match_all": {}}, [{"chunk_id": "asc"}], source=source)
        return [(h["_source"]["chunk_id"], h["_source"]["doc_id"], h["_source"]["version"]) for h in hits]

    def iter_chunks(self) -> Iterator[Chunk]:
        for hit in self._t.scan(self._chunks_read_target(), {"match_all": {}}, [{"chunk_id": "asc"}]):
            yield Chunk.from_json(hit["_source"])

    def _search(self, query: str, reader: Access, as_of: date | None, top: int, doc_id: str | None) -> list[Hit]:
        """BM25 top ``top`` through the role's alias, access and as-of filtered inside the query."""
        if not reader.labels or top <= 0:
            return []
        if reader.role and self._build is not None and not self.settings.labels_for_role(reader.role):
            return []  # a role that may read nothing (no alias exists to search)
        check_query_size(query)
        target = self._chunks_read_target(reader.role)
        through_alias = bool(reader.role) and self._build is None  # the role alias, with its own filter
        hits, foreign = self._search_once(target, query, reader, as_of, top, doc_id, through_alias, False)
        if foreign and reader.withheld is not None:
            # A hit of a label the index does not record got past the exclusions (the alias filter was
            # changed outside ingest): the same search with the role's own labels checked too.
            hits, _ = self._search_once(target, query, reader, as_of, top, doc_id, through_alias, True)
        return hits

    def _search_once(
        self,
        target: str,
        query: str,
        reader: Access,
        as_of: date | None,
        top: int,
        doc_id: str | None,
        through_alias: bool,
        check_labels: bool,
    ) -> tuple[list[Hit], bool]:
        """The hits, and whether some were left out for a label the role may not read (never returned,
        whatever put them there: a chunk without one label of the role's, or with several)."""
        body = search_body(
            query, reader.labels, as_of, top, doc_id,
            behind_role_alias=through_alias, withheld=reader.withheld, check_labels=check_labels,
        )  # fmt: skip
        resp = self._t.search_response(target, body, search_type=SEARCH_TYPE)
        if resp is None and reader.role and self._build is None:
            self._missing_role_alias(target)
        found = resp["hits"]["hits"] if resp else []
        allowed = [hit for hit in found if readable(hit["_source"], reader.labels)]
        return [Hit(self._hit_chunk(hit), float(hit["_score"] or 0.0)) for hit in allowed], len(allowed) < len(found)

    def _hit_chunk(self, hit: dict[str, Any]) -> Chunk:
        try:
            return Chunk.from_json(hit["_source"])
        except (KeyError, TypeError, ValueError) as exc:
            raise StoreError(
                f"{self.name}: {hit.get('_index')}/{hit.get('_id')} is not a chunk ingest wrote ({type(exc).__name__}: "
                f"{exc}); it was written outside ingest. `ingest verify` lists the chunks that do not belong"
            ) from None

    def _missing_role_alias(self, alias: str) -> None:
        """A role that may read labels has an alias once a run wrote this prefix: when it is gone
        (removed by hand, or its indices deleted or recreated outside ingest), "no hits" would be a
        lie. A prefix holding nothing at all is left to require_ingest_index ("no ingest index")."""

        def prefix_exists() -> bool:
            try:
                return bool(self.es.indices.exists_alias(name=self.all_alias).body)
            except AuthorizationException:
                return True  # a reader of its role alias only: cannot tell, and "no hits" would be a lie

        if self._t.call(prefix_exists, missing=False):
            raise NoIngestIndex(
                f"{self.name}: the role alias {alias} does not exist (index prefix {self.prefix!r} is "
                "there): it was removed, or its indices deleted or recreated, outside ingest; searches "
                "through it cannot answer. The next `ingest run` repairs it."
            )

    def counts(self) -> Counts:
        aggs = {field: {"terms": {"field": field, "size": 10000}} for field in COUNTED_FIELDS}
        resp = self._t.search_response(self._chunks_read_target(), {"size": 0, "track_total_hits": True, "aggs": aggs})
        by: dict[str, dict[str, int]] = {}
        for field in COUNTED_FIELDS:
            buckets = resp["aggregations"][field]["buckets"] if resp else []
            by[field] = {b["key"]: b["doc_count"] for b in buckets}
        records = self.documents()
        formats: dict[str, int] = {}
        for record in records:
            formats[record.format] = formats.get(record.format, 0) + record.chunk_count
        total = resp["hits"]["total"]["value"] if resp else 0
        return Counts(
            access=by["access"],
            status=by["status"],
            version=by["version"],
            format=dict(sorted(formats.items())),
            totals={"chunks": total, "documents": len(records)},
        )

    # --- run metadata --------------------------------------------------------------------------
    def get_meta(self) -> dict[str, str]:
        """The run metadata; none when these credentials may not read the meta index (a reader
        restricted to role aliases): `search` then takes the labels its role alias holds
        (:meth:`labels_behind_role_alias`), and that alias decides what can be found."""
        ahead = self._layout.take_meta()  # read along with the layout just now (one request for both)
        return ahead if ahead is not None else self._stored_meta(forbidden_is_empty=True)

    def labels_behind_role_alias(self, role: str) -> tuple[str, ...] | None:
        """For credentials that may not read the run metadata (a reader of its role alias only): the
        access labels of the chunks its role alias holds, so `search` does not narrow the alias by a
        guess of the roles (the default roles' labels, where the index was built with others). The
        alias bounds what these credentials can read; no label above the role can be found through
        it. None when the metadata was readable, or the alias does not exist (the search says so)."""
        from ingest.settings import ROLE_NAME

        if not self._meta_forbidden or self._build is not None or not ROLE_NAME.match(role):
            return None
        body = {"size": 0, "aggs": {"access": {"terms": {"field": "access", "size": 10000}}}}
        resp = self._t.search_response(self.role_alias(role), body)
        if resp is None:
            return None
        return tuple(sorted(bucket["key"] for bucket in resp["aggregations"]["access"]["buckets"]))

    def _stored_meta(self, forbidden_is_empty: bool = False) -> dict[str, str]:
        def read() -> Any:
            try:
                return self.es.get(index=self.meta_index, id=META_ID)
            except AuthorizationException:
                if forbidden_is_empty:
                    self._meta_forbidden = True
                    return None
                raise

        found = self._t.call(read, missing=None)
        return dict(found["_source"].get("values") or {}) if found else {}

    def set_meta(self, values: Mapping[str, str]) -> None:
        self._layout.forget_meta()
        self._t.call(self._layout.ensure_meta_index)
        self._assert_lock()
        merged = {**self._stored_meta(), **{k: str(v) for k, v in values.items()}}
        document = {"values": merged}
        # Read back by ID only (a real-time get): no refresh, which cost a run's journal ~0.1 s per batch.
        self._t.call(lambda: self.es.index(index=self.meta_index, id=META_ID, document=document))
