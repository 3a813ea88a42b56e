"""The production store: Elasticsearch 9.x, behind :class:`ingest.store.base.Store`.

Layout for index prefix ``P`` (default ``ingest``) and a build suffix ``B``
(``YYYYmmddtHHMMSS-xxxxxx``, UTC time plus 6 random hex digits; it never contains ``_``):

  concrete indices (one set per build)           aliases (what readers use)
  ``P-chunks_{label}_B``  one per access label   ``P-chunks-{role}``  one per role, over exactly
                                                                      the label indices it may read
                                                 ``P-chunks``         over every label index
  ``P-documents_B``       one record per         ``P-documents``
                          document version, _id ``doc_id@version``
  ``P-meta``              (not rebuilt) run metadata (_id ``meta``) and the write lock (_id ``lock``)

Why these names cannot clash: every role alias is ``P-chunks-`` + role (a ``-`` after ``chunks``),
every chunk index is ``P-chunks_`` + … (an ``_`` after ``chunks``), so no role or label name can make
an alias equal an index; the label is recovered from an index name as the part between the first
``_`` after ``P-chunks`` and the last ``_`` (builds contain no ``_``). Labels and roles must be
lowercase slugs (``[a-z0-9][a-z0-9._-]*``) because Elasticsearch index and alias names are lowercase.

Access is separated by index: a chunk lives only in its label's index, so a key allowed to read
``P-chunks-public`` alone cannot reach a staff chunk by search or by ID. Searches additionally
filter ``access`` inside the query.

Mappings come from ``mappings/chunks.json``, ``documents.json`` and ``meta.json`` (``dynamic:
strict``). ``title`` and ``section`` are ``keyword`` (exact filters, aggregations, Kibana columns)
with a ``.text`` sub-field analysed for BM25. Analysis follows ``[search] language`` in
ingest.toml: ``english`` (the default) puts Elasticsearch's ``english`` analyzer (stemming, English
stop words: "invoice" finds "Invoicing") on ``text``, ``title.text`` and ``section.text``; ``none``
puts ``standard`` there; the ``analyzer`` argument / ``INGEST_ES_ANALYZER`` overrides both. Each of
those fields has an ``.exact`` sub-field analysed by ``standard`` (no stemming, no stop words):
codes in the query (``NW-4471-B``) are also matched there as phrases, so the exact code outranks
chunks that merely share its parts or a stem. A cluster without the analyzer is refused
(StoreConfigError naming it) before any index is created; the analyzer is recorded in the run
metadata (``analysis``) and a change rebuilds the indices (see the pipeline).

Searches use ``combined_fields`` (BM25F over the three fields with the weights of
``FIELD_WEIGHTS``, shared with SQLite, whose FTS5 ``bm25()`` also scores a row's columns together)
and ``dfs_query_then_fetch``: term statistics are gathered over every label index searched, so a
score from the staff index compares with one from the public index (with per-index statistics the
same passage scores differently depending on which label it carries).

Writes use ``helpers.streaming_bulk`` with bounded requests (5 MB, 500 actions), retries with
exponential backoff on 429/502/503/504 (per item and per request) and on connection errors;
every item still refused becomes an ``ItemError`` in the ``WriteReport``. Nothing here uses
``_delete_by_query`` or ``_reindex`` (not in every distribution): deletes are by ID, to the
concrete index where a search by ID found the chunk.

Refresh: writes do not refresh per request. The store refreshes what it wrote before its own next
read, in :meth:`ElasticsearchStore.refresh`, when the lock is released, and in ``close()``; so a
run's result is searchable when the run returns.

The first write to an empty cluster creates the indices and aliases (:meth:`ensure_layout`);
reads on an empty cluster find nothing instead of creating anything.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import threading
import time
from contextlib import contextmanager
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence, TypeVar

from elasticsearch import (
    ApiError,
    AuthenticationException,
    AuthorizationException,
    ConflictError,
    Elasticsearch,
    NotFoundError,
    TransportError,
)
from elasticsearch.helpers import streaming_bulk

from ingest.model import MIN_PREFIX, Chunk, DocumentRecord, Hit
from ingest.resources import load_mapping
from ingest.settings import Settings, SettingsError
from ingest.store.base import (
    EXACT_TOKEN,
    FIELD_WEIGHTS,
    AmbiguousPrefix,
    ChunkNotFound,
    ItemError,
    StoreConfigError,
    StoreError,
    StoreLocked,
    StoreUnavailable,
    WriteReport,
)

# [search] language -> the analyzer of the BM25 text fields (``english`` is built into every full
# distribution and Docker image; the test node gets it from elasticsearch-plugins/english-analysis).
LANGUAGE_ANALYZERS = {"english": "english", "none": "standard"}
DEFAULT_ANALYZER = LANGUAGE_ANALYZERS["english"]
EXACT_FIELD = "exact"  # the unstemmed sub-field; its analyzer is fixed in mappings/*.json
SEARCH_TYPE = "dfs_query_then_fetch"
NAME_PART = re.compile(r"[a-z0-9][a-z0-9._-]*\Z")
BULK_MAX_BYTES = 5 * 1024 * 1024
BULK_MAX_ACTIONS = 500
RETRY_STATUSES = (429, 502, 503, 504)
PAGE = 1000  # hits per page when scrolling with search_after
IDS_BATCH = 1000  # IDs per lookup query
LOCK_TTL_S = 600.0
META_ID = "meta"
LOCK_ID = "lock"
SEARCH_FIELDS = tuple(
    f"{field}^{weight:g}" if field == "text" else f"{field}.text^{weight:g}" for field, weight in FIELD_WEIGHTS.items()
)
EXACT_FIELDS = tuple(f"{field}.{EXACT_FIELD}^{weight:g}" for field, weight in FIELD_WEIGHTS.items())

T = TypeVar("T")


# --- pure helpers ----------------------------------------------------------------------------


def load_index_body(name: str, analyzer: str = DEFAULT_ANALYZER) -> dict[str, Any]:
    """``mappings/{name}.json`` with every BM25 text field's analyzer set to ``analyzer``
    (the ``.exact`` sub-fields keep theirs)."""
    body = load_mapping(name)  # the package copy when installed (ingest/resources.py)
    _set_analyzer(body["mappings"]["properties"], analyzer)
    return body


def _set_analyzer(properties: dict[str, Any], analyzer: str) -> None:
    for name, spec in properties.items():
        if name == EXACT_FIELD:
            continue
        if spec.get("type") == "text":
            spec["analyzer"] = analyzer
        _set_analyzer(spec.get("fields", {}), analyzer)
        _set_analyzer(spec.get("properties", {}), analyzer)


def analyzer_for(settings: Settings) -> str:
    """The analyzer of the BM25 fields: INGEST_ES_ANALYZER, else the one of [search] language."""
    return os.environ.get("INGEST_ES_ANALYZER") or LANGUAGE_ANALYZERS[settings.search.language]


def new_build() -> str:
    """A build suffix: sortable UTC time plus randomness (no ``_``, lowercase)."""
    return datetime.now(timezone.utc).strftime("%Y%m%dt%H%M%S") + "-" + secrets.token_hex(3)


def as_of_filters(as_of: date | None) -> list[dict[str, Any]]:
    """effective_from ≤ as_of (or none) and effective_to ≥ as_of (or none)."""
    if as_of is None:
        return []
    day = as_of.isoformat()

    def bound(field: str, op: str) -> dict[str, Any]:
        return {
            "bool": {
                "should": [
                    {"range": {field: {op: day}}},
                    {"bool": {"must_not": {"exists": {"field": field}}}},
                ],
                "minimum_should_match": 1,
            }
        }

    return [bound("effective_from", "lte"), bound("effective_to", "gte")]


def search_body(
    query: str, labels: Sequence[str], as_of: date | None, top: int, doc_id: str | None
) -> dict[str, Any]:
    filters: list[dict[str, Any]] = [{"terms": {"access": list(labels)}}, *as_of_filters(as_of)]
    if doc_id:
        filters.append({"term": {"doc_id": doc_id}})
    # Codes in the query, also as exact phrases over the unstemmed sub-fields.
    exact = [
        {"multi_match": {"query": code, "type": "phrase", "fields": list(EXACT_FIELDS)}}
        for code in dict.fromkeys(re.findall(EXACT_TOKEN, query))
    ]
    return {
        "query": {
            "bool": {
                "must": {"combined_fields": {"query": query, "fields": list(SEARCH_FIELDS)}},
                "should": exact,
                "filter": filters,
            }
        },
        "size": top,
        "sort": [{"_score": "desc"}, {"chunk_id": "asc"}],
        "track_total_hits": False,
    }


class ElasticsearchStore:
    """Chunks, document records and run metadata in Elasticsearch (see the module docstring)."""

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
        client: Elasticsearch | None = None,
        build: str | None = None,
    ):
        self.url = url.rstrip("/")
        self.name = _without_credentials(self.url)
        self.prefix = prefix
        self.settings = settings or Settings()
        self.analyzer = analyzer or analyzer_for(self.settings)
        self.analysis = self.analyzer
        self._analyzer_checked = False
        self.lock_ttl_s = lock_ttl_s
        self.max_retries = max_retries
        self.initial_backoff = initial_backoff
        for kind, names in (("access label", self.settings.labels), ("role", self.settings.roles)):
            for name in names:
                if not NAME_PART.match(name):
                    raise SettingsError(
                        f"{kind} {name!r} cannot name an Elasticsearch index or alias: "
                        "use lowercase letters, digits, '.', '_' and '-'"
                    )
        if not NAME_PART.match(prefix):
            raise SettingsError(f"index prefix {prefix!r}: use lowercase letters, digits, '.', '_' and '-'")
        self._owns_client = client is None
        self.es = client or _connect(self.url, request_timeout)
        # A pinned build: this object writes to and reads from that build's concrete indices
        # (used inside full_rebuild). None: the live layout behind the aliases.
        self._build = build
        self._label_index: dict[str, str] | None = None  # label -> concrete index, once known
        self._documents_index: str | None = None
        self._dirty: set[str] = set()  # indices written since the last refresh
        self._meta_mapping_checked = False

    # --- names ---------------------------------------------------------------------------
    @property
    def all_alias(self) -> str:
        return f"{self.prefix}-chunks"

    def role_alias(self, role: str) -> str:
        return f"{self.prefix}-chunks-{role}"

    @property
    def documents_alias(self) -> str:
        return f"{self.prefix}-documents"

    @property
    def meta_index(self) -> str:
        return f"{self.prefix}-meta"

    def chunk_index(self, label: str, build: str) -> str:
        return f"{self.prefix}-chunks_{label}_{build}"

    def documents_index(self, build: str) -> str:
        return f"{self.prefix}-documents_{build}"

    def label_of_index(self, index: str) -> str | None:
        head = f"{self.prefix}-chunks_"
        if not index.startswith(head) or "_" not in index[len(head):]:
            return None
        return index[len(head):].rsplit("_", 1)[0]

    def desired_aliases(self, label_index: dict[str, str], documents_index: str) -> set[tuple[str, str]]:
        """(index, alias) pairs of a complete layout for the configured labels and roles."""
        pairs = {(index, self.all_alias) for index in label_index.values()}
        for role, labels in self.settings.roles.items():
            pairs |= {(label_index[label], self.role_alias(role)) for label in labels if label in label_index}
        pairs.add((documents_index, self.documents_alias))
        return pairs

    def _chunks_read_target(self, role: str | None = None) -> str:
        if self._build is None:
            return self.role_alias(role) if role else self.all_alias
        labels = self.settings.labels_for_role(role) if role else self.settings.labels
        return ",".join(self.chunk_index(label, self._build) for label in labels)

    def _documents_read_target(self) -> str:
        return self.documents_alias if self._build is None else self.documents_index(self._build)

    # --- lifecycle -----------------------------------------------------------------------
    def check(self) -> None:
        try:
            self.es.options(request_timeout=5, max_retries=0).cluster.health()
        except AuthorizationException:
            # Answered and authenticated: credentials that may read a role alias only (the
            # real-world reader) lack the cluster privilege `monitor`; what they may read decides.
            return
        except Exception as exc:  # noqa: BLE001 - every failure becomes one clear message
            raise self._unavailable(exc) from None

    def close(self) -> None:
        try:
            self.refresh()
        finally:
            if self._owns_client:
                self.es.close()

    def refresh(self) -> None:
        """Make everything written so far searchable."""
        if not self._dirty:
            return
        indices = ",".join(sorted(self._dirty))
        self._call(lambda: self.es.indices.refresh(index=indices, ignore_unavailable=True))
        self._dirty.clear()

    def ensure_layout(self) -> None:
        """Create the meta index, the label and documents indices and every alias if missing;
        add indices for new labels and re-point role aliases when ingest.toml changed."""
        if self._label_index is not None:
            return
        self._call(self._ensure_meta_index)
        if self._build is not None:
            self._label_index = {label: self.chunk_index(label, self._build) for label in self.settings.labels}
            self._documents_index = self.documents_index(self._build)
            return
        label_index, documents_index = self._call(self._live_layout)
        if documents_index is None or set(self.settings.labels) - set(label_index):
            self._check_analyzer()  # before anything is created with it
        build = _build_of(documents_index) if documents_index else new_build()
        if documents_index is None:
            documents_index = self.documents_index(build)
            self._call(lambda: self._create_index(documents_index, "documents"))
        for label in self.settings.labels:
            if label not in label_index:
                label_index[label] = self.chunk_index(label, build)
                self._call(lambda: self._create_index(label_index[label], "chunks"))
        self._call(lambda: self._sync_aliases(label_index, documents_index))
        self._label_index, self._documents_index = label_index, documents_index

    def _live_layout(self) -> tuple[dict[str, str], str | None]:
        """label -> concrete index behind the all-alias, and the documents index (or None)."""
        label_index: dict[str, str] = {}
        try:
            found = self.es.indices.get_alias(name=self.all_alias)
        except NotFoundError:
            found = {}
        for index in sorted(found):
            label = self.label_of_index(index)
            if label:
                label_index[label] = index
        try:
            documents = sorted(self.es.indices.get_alias(name=self.documents_alias))
        except NotFoundError:
            documents = []
        return label_index, (documents[-1] if documents else None)

    def _sync_aliases(self, label_index: dict[str, str], documents_index: str) -> None:
        """One atomic _aliases call that makes the aliases exactly the desired ones."""
        indices = ",".join([*label_index.values(), documents_index])
        current = {
            (index, alias)
            for index, spec in self.es.indices.get_alias(index=indices).items()
            for alias in spec.get("aliases", {})
        }
        desired = self.desired_aliases(label_index, documents_index)
        ours = {a for _, a in current if a in (self.all_alias, self.documents_alias) or a.startswith(f"{self.all_alias}-")}
        stale = {(i, a) for i, a in current - desired if a in ours}  # aliases someone else added stay
        actions = [{"remove": {"index": i, "alias": a}} for i, a in sorted(stale)]
        actions += [{"add": {"index": i, "alias": a}} for i, a in sorted(desired - current)]
        if actions:
            self.es.indices.update_aliases(actions=actions)

    def _check_analyzer(self) -> None:
        """Refuse a cluster without the analyzer (never index with another one)."""
        if self._analyzer_checked:
            return
        try:
            self.es.indices.analyze(analyzer=self.analyzer, text="ingest")
        except AuthorizationException:
            return  # may not call _analyze: index creation below names a missing analyzer too
        except ApiError as exc:
            if exc.meta.status == 400:
                raise self._missing_analyzer(exc) from None
            raise self._unavailable(exc) from None
        except TransportError as exc:
            raise self._unavailable(exc) from None
        self._analyzer_checked = True

    def _missing_analyzer(self, exc: ApiError) -> StoreConfigError:
        hint = (
            "set [search] language = \"none\" in ingest.toml for the standard analyzer"
            if os.environ.get("INGEST_ES_ANALYZER") is None
            else "unset INGEST_ES_ANALYZER or name an analyzer the cluster has"
        )
        return StoreConfigError(
            f"Elasticsearch at {self.name} has no analyzer {self.analyzer!r} ({_reason(exc)}): "
            f"refusing to index with another one. Use a distribution that includes it (every full "
            f"distribution and Docker image has 'english'; scripts/elasticsearch-local installs it), or {hint}"
        )

    def _create_index(self, index: str, kind: str, extra_settings: dict[str, Any] | None = None) -> None:
        body = load_index_body(kind, self.analyzer)
        if extra_settings:
            body["settings"]["index"].update(extra_settings)
        try:
            self.es.indices.create(index=index, settings=body["settings"], mappings=body["mappings"])
        except ApiError as exc:
            if _error_type(exc) == "mapper_parsing_exception" and "analyzer" in _reason(exc):
                raise self._missing_analyzer(exc) from None
            if _error_type(exc) != "resource_already_exists_exception":
                raise

    def _ensure_meta_index(self) -> None:
        if not self.es.indices.exists(index=self.meta_index):
            self._check_analyzer()  # a new store: refuse before creating anything
            self._create_index(self.meta_index, "meta")
        elif not self._meta_mapping_checked:
            # A meta index from an older ingest: add the fields it lacks (adding is always allowed).
            body = load_index_body("meta", self.analyzer)
            self.es.indices.put_mapping(index=self.meta_index, properties=body["mappings"]["properties"])
        self._meta_mapping_checked = True

    # --- lock --------------------------------------------------------------------------------
    @contextmanager
    def lock(self, owner: str, wait_s: float = 0.0) -> Iterator[None]:
        if self._build is not None:
            raise StoreError("lock() is taken on the live store, not inside full_rebuild()")
        self._call(self._ensure_meta_index)
        held = self._acquire(owner, wait_s)
        # A run killed before its writes were refreshed left them acknowledged but not yet
        # searchable. Refresh everything now, so this run's repair and plan read one
        # consistent state (else it could see a record without its chunks, or the reverse).
        self._call(lambda: self.es.indices.refresh(index=f"{self.all_alias},{self.documents_alias}", ignore_unavailable=True, allow_no_indices=True), missing=None)
        stop = threading.Event()
        keeper = threading.Thread(target=self._keep_lock, args=(owner, held, stop), daemon=True)
        keeper.start()
        try:
            yield
            self.refresh()
        finally:
            stop.set()
            keeper.join()
            self._release(held)

    def _acquire(self, owner: str, wait_s: float) -> dict[str, int]:
        deadline = time.monotonic() + max(0.0, wait_s)
        while True:
            now = datetime.now(timezone.utc)
            doc = self._lock_doc(owner, now)
            try:
                resp = self._call(lambda: self.es.create(index=self.meta_index, id=LOCK_ID, document=doc))
                return {"seq_no": resp["_seq_no"], "primary_term": resp["_primary_term"]}
            except ConflictError:
                pass
            current = self._call(lambda: self.es.get(index=self.meta_index, id=LOCK_ID), missing=None)
            if current is None:
                continue  # released in between: try again at once
            src = current["_source"]
            if _parse_iso(src["expires_at"]) <= now or _holder_is_dead(src):
                # Expired, or its process is gone (killed on this host): take it over,
                # but only if nobody else did in between.
                try:
                    self._call(lambda: self.es.delete(
                        index=self.meta_index, id=LOCK_ID,
                        if_seq_no=current["_seq_no"], if_primary_term=current["_primary_term"],
                    ))
                except (ConflictError, NotFoundError):
                    pass
                continue
            if time.monotonic() >= deadline:
                raise StoreLocked(
                    f"Elasticsearch at {self.name} (index prefix {self.prefix!r}) is being written by "
                    f"{src['owner']} (since {src.get('acquired_at')}); wait for it to finish. The lock "
                    f"expires at {src['expires_at']} if that run died on another host."
                )
            time.sleep(min(1.0, max(0.05, deadline - time.monotonic())))

    def _lock_doc(self, owner: str, acquired_at: datetime) -> dict[str, Any]:
        expires = datetime.now(timezone.utc) + timedelta(seconds=self.lock_ttl_s)
        return {
            "owner": owner,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "acquired_at": _iso(acquired_at),
            "expires_at": _iso(expires),
        }

    def _keep_lock(self, owner: str, held: dict[str, int], stop: threading.Event) -> None:
        """Push expires_at forward every third of the TTL while the run goes on."""
        acquired_at = datetime.now(timezone.utc)
        while not stop.wait(self.lock_ttl_s / 3):
            doc = self._lock_doc(owner, acquired_at)
            try:
                resp = self.es.index(
                    index=self.meta_index, id=LOCK_ID, document=doc,
                    if_seq_no=held["seq_no"], if_primary_term=held["primary_term"],
                )
                held.update(seq_no=resp["_seq_no"], primary_term=resp["_primary_term"])
            except Exception:  # noqa: BLE001 - lost or unreachable: the run finds out on its next write
                return

    def _release(self, held: dict[str, int]) -> None:
        try:
            self.es.delete(
                index=self.meta_index, id=LOCK_ID,
                if_seq_no=held["seq_no"], if_primary_term=held["primary_term"],
            )
        except (ConflictError, NotFoundError):
            pass  # taken over after expiry: not ours to delete
        except (ApiError, TransportError) as exc:
            raise self._unavailable(exc) from None

    # --- full rebuild ----------------------------------------------------------------------
    @contextmanager
    def full_rebuild(self) -> Iterator["ElasticsearchStore"]:
        if self._build is not None:
            raise StoreError("full_rebuild() cannot be nested")
        build = new_build()
        fill_settings = {"refresh_interval": "-1", "number_of_replicas": 0}
        new_labels = {label: self.chunk_index(label, build) for label in self.settings.labels}
        new_documents = self.documents_index(build)
        new_indices = [*new_labels.values(), new_documents]
        self._check_analyzer()
        self._call(self._ensure_meta_index)
        try:
            for index in new_labels.values():
                self._call(lambda: self._create_index(index, "chunks", fill_settings))
            self._call(lambda: self._create_index(new_documents, "documents", fill_settings))
            fresh = ElasticsearchStore(
                self.url, self.prefix, self.settings, analyzer=self.analyzer, lock_ttl_s=self.lock_ttl_s,
                max_retries=self.max_retries, initial_backoff=self.initial_backoff, client=self.es, build=build,
            )
            yield fresh
            old_indices = self._call(lambda: self._switch_to(new_labels, new_documents))
        except BaseException:
            # Not switched: readers still use the old build; drop the half-built one.
            self._call(lambda: self.es.indices.delete(index=",".join(new_indices), ignore_unavailable=True))
            raise
        self._label_index, self._documents_index = None, None
        self._dirty.clear()
        if old_indices:
            self._call(lambda: self.es.indices.delete(index=",".join(old_indices), ignore_unavailable=True))

    def _switch_to(self, new_labels: dict[str, str], new_documents: str) -> list[str]:
        """Finish the new build and move every alias to it in one call; the old indices."""
        new_indices = [*new_labels.values(), new_documents]
        old_indices = [
            index
            for index in self.es.indices.get(index=f"{self.prefix}-chunks_*,{self.prefix}-documents_*", expand_wildcards="open,closed")
            if index not in new_indices
        ]
        replicas = self._replicas_of(old_indices)
        self.es.indices.put_settings(
            index=",".join(new_indices),
            settings={"index": {"refresh_interval": None, "number_of_replicas": replicas}},
        )
        self.es.indices.refresh(index=",".join(new_indices))
        if replicas:
            self.es.cluster.health(index=",".join(new_indices), wait_for_status="yellow", timeout="60s")
        current = (
            {
                (index, alias)
                for index, spec in self.es.indices.get_alias(index=",".join(old_indices)).items()
                for alias in spec.get("aliases", {})
            }
            if old_indices
            else set()
        )
        actions = [{"remove": {"index": i, "alias": a}} for i, a in sorted(current)]
        actions += [{"add": {"index": i, "alias": a}} for i, a in sorted(self.desired_aliases(new_labels, new_documents))]
        self.es.indices.update_aliases(actions=actions)  # the one atomic switch
        return old_indices

    def _replicas_of(self, indices: list[str]) -> int | None:
        """The replica count the live build had (None: the cluster default)."""
        if not indices:
            return None
        found = self.es.indices.get_settings(index=indices[0], name="index.number_of_replicas")
        for spec in found.values():
            return int(spec["settings"]["index"]["number_of_replicas"])
        return None

    # --- documents ---------------------------------------------------------------------------
    def documents(self) -> list[DocumentRecord]:
        hits = self._scan(self._documents_read_target(), {"match_all": {}}, [{"doc_id": "asc"}, {"version": "asc"}])
        return [DocumentRecord.from_json(hit["_source"]) for hit in hits]

    def put_document(self, record: DocumentRecord) -> None:
        self.put_documents([record])

    def put_documents(self, records: Iterable[DocumentRecord]) -> None:
        """Many records in bounded bulk requests (a refused one raises: records are ours, not input)."""
        self.ensure_layout()
        assert self._documents_index is not None
        index = self._documents_index
        actions = [{"_op_type": "index", "_index": index, "_id": r.key, "_source": r.to_json()} for r in records]
        _, errors = self._bulk(actions)
        if errors:
            raise StoreError(f"Elasticsearch at {self.name}: document record {errors[0].id} refused: {errors[0].reason}")

    def delete_document(self, doc_id: str, version: str) -> None:
        self.delete_documents([f"{doc_id}@{version}"])

    def delete_documents(self, keys: Iterable[str]) -> None:
        self.ensure_layout()
        index = self._documents_index
        actions = [{"_op_type": "delete", "_index": index, "_id": key} for key in keys]
        _, errors = self._bulk(actions)
        if errors:
            raise StoreError(f"Elasticsearch at {self.name}: deleting record {errors[0].id} failed: {errors[0].reason}")

    # --- chunks ------------------------------------------------------------------------------
    def chunk_source(self, chunk: Chunk) -> dict[str, Any]:
        """The stored document of a chunk (a hook for tests of refused items)."""
        return chunk.to_json()

    def write_chunks(self, chunks: Iterable[Chunk]) -> WriteReport:
        self.ensure_layout()
        assert self._label_index is not None
        report = WriteReport()
        for batch in _batches(chunks, IDS_BATCH):
            actions: list[dict[str, Any]] = []
            targets: dict[str, str] = {}
            for chunk in batch:
                index = self._label_index.get(chunk.access)
                if index is None:
                    report.errors.append(ItemError(chunk.chunk_id, f"access label {chunk.access!r} is not configured"))
                    continue
                targets[chunk.chunk_id] = index
                actions.append({"_op_type": "index", "_index": index, "_id": chunk.chunk_id, "_source": self.chunk_source(chunk)})
            # A chunk whose label changed (same ID) must leave its old label's index.
            for chunk_id, index in self._locate(list(targets)):
                if index != targets[chunk_id]:
                    actions.append({"_op_type": "delete", "_index": index, "_id": chunk_id})
            written, errors = self._bulk(actions)
            report.written += written
            report.errors.extend(errors)
        return report

    def delete_chunks(self, chunk_ids: Iterable[str]) -> int:
        deleted = 0
        for batch in _batches(chunk_ids, IDS_BATCH):
            actions = [{"_op_type": "delete", "_index": index, "_id": cid} for cid, index in self._locate(batch)]
            count, errors = self._bulk(actions)
            deleted += count
            if errors:
                raise StoreError(
                    f"Elasticsearch at {self.name}: {len(errors)} chunk deletions failed, e.g. {errors[0].id}: {errors[0].reason}"
                )
        return deleted

    def _locate(self, chunk_ids: list[str]) -> list[tuple[str, str]]:
        """(chunk_id, concrete index) of every stored copy of these IDs.

        A multi-get over every label index: real-time (it sees writes not yet refreshed),
        so a run never has to refresh between its own writes.
        """
        if not chunk_ids:
            return []
        label_index = self._label_index if self._label_index is not None else self._call(self._live_layout)[0]
        indices = sorted(set(label_index.values()))
        if not indices:
            return []
        docs = [{"_index": index, "_id": cid} for cid in chunk_ids for index in indices]
        found: list[tuple[str, str]] = []
        for batch in _batches(docs, IDS_BATCH * 3):
            resp = self._call(lambda: self.es.mget(docs=batch, source=False).body)
            found += [(d["_id"], d["_index"]) for d in resp["docs"] if d.get("found")]
        return found

    def get_chunk(self, id_or_prefix: str) -> Chunk:
        wanted = id_or_prefix.strip().lower()
        if len(wanted) < MIN_PREFIX:
            raise ChunkNotFound(f"chunk ID prefix {id_or_prefix!r} is shorter than {MIN_PREFIX} characters")
        query = {"term": {"chunk_id": wanted}} if len(wanted) >= 20 else {"prefix": {"chunk_id": wanted}}
        hits = self._search(self._chunks_read_target(), {"query": query, "size": 50, "sort": [{"chunk_id": "asc"}]})
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
        hits = self._scan(
            self._chunks_read_target(),
            {"bool": {"filter": filters}},
            [{"version": "asc"}, {"position": "asc"}, {"chunk_id": "asc"}],
        )
        return [Chunk.from_json(hit["_source"]) for hit in hits]

    def neighbours(self, chunk: Chunk, n: int) -> tuple[list[Chunk], list[Chunk]]:
        if n <= 0:
            return [], []

        def around(bounds: dict[str, int], order: str) -> list[Chunk]:
            query = {"bool": {"filter": [
                {"term": {"doc_id": chunk.doc_id}},
                {"term": {"version": chunk.version}},
                {"range": {"position": bounds}},
            ]}}
            body = {"query": query, "size": n, "sort": [{"position": order}, {"chunk_id": order}]}
            return [Chunk.from_json(hit["_source"]) for hit in self._search(self._chunks_read_target(), body)]

        before = around({"gte": chunk.position - n, "lt": chunk.position}, "desc")
        after = around({"gt": chunk.position, "lte": chunk.position + n}, "asc")
        return list(reversed(before)), after

    def chunk_keys(self) -> list[tuple[str, str, str]]:
        hits = self._scan(
            self._chunks_read_target(), {"match_all": {}}, [{"chunk_id": "asc"}],
            source=["chunk_id", "doc_id", "version"],
        )
        return [(h["_source"]["chunk_id"], h["_source"]["doc_id"], h["_source"]["version"]) for h in hits]

    def iter_chunks(self) -> Iterator[Chunk]:
        for hit in self._scan(self._chunks_read_target(), {"match_all": {}}, [{"chunk_id": "asc"}]):
            yield Chunk.from_json(hit["_source"])

    def search(
        self,
        query: str,
        labels: Sequence[str],
        as_of: date | None,
        top: int = 5,
        doc_id: str | None = None,
        role: str | None = None,
    ) -> list[Hit]:
        if not labels or top <= 0:
            return []
        if role and self._build is not None and not self.settings.labels_for_role(role):
            return []  # a role that may read nothing (no alias exists to search)
        body = search_body(query, labels, as_of, top, doc_id)
        hits = self._search(self._chunks_read_target(role), body, search_type=SEARCH_TYPE)
        return [Hit(Chunk.from_json(hit["_source"]), float(hit["_score"] or 0.0)) for hit in hits]

    def counts(self) -> dict[str, dict[str, int]]:
        body = {
            "size": 0,
            "track_total_hits": True,
            "aggs": {field: {"terms": {"field": field, "size": 10000}} for field in ("access", "status", "version")},
        }
        resp = self._search_response(self._chunks_read_target(), body)
        result: dict[str, dict[str, int]] = {}
        for field in ("access", "status", "version"):
            buckets = resp["aggregations"][field]["buckets"] if resp else []
            result[field] = {b["key"]: b["doc_count"] for b in buckets}
        records = self.documents()
        formats: dict[str, int] = {}
        for record in records:
            formats[record.format] = formats.get(record.format, 0) + record.chunk_count
        result["format"] = dict(sorted(formats.items()))
        total = resp["hits"]["total"]["value"] if resp else 0
        result["totals"] = {"chunks": total, "documents": len(records)}
        return result

    # --- run metadata ----------------------------------------------------------------------
    def get_meta(self) -> dict[str, str]:
        """The run metadata; none when these credentials may not read the meta index (a reader
        restricted to role aliases): `search` then takes the default roles, and the role alias it
        reads still decides what can be found."""
        return self._stored_meta(forbidden_is_empty=True)

    def _stored_meta(self, forbidden_is_empty: bool = False) -> dict[str, str]:
        def read() -> Any:
            try:
                return self.es.get(index=self.meta_index, id=META_ID)
            except AuthorizationException:
                if forbidden_is_empty:
                    return None
                raise

        found = self._call(read, missing=None)
        return dict(found["_source"].get("values") or {}) if found else {}

    def set_meta(self, values: dict[str, str]) -> None:
        self._call(self._ensure_meta_index)
        merged = {**self._stored_meta(), **{k: str(v) for k, v in values.items()}}
        self._call(lambda: self.es.index(index=self.meta_index, id=META_ID, document={"values": merged}, refresh=True))

    # --- transport -------------------------------------------------------------------------
    def _bulk(self, actions: list[dict[str, Any]]) -> tuple[int, list[ItemError]]:
        """Send actions in bounded requests; (how many succeeded, every item still refused).

        Per-item and per-request 429/502/503/504 are retried by streaming_bulk with backoff;
        a connection failure retries the items not yet answered, with backoff, then gives up
        with StoreUnavailable.
        """
        done = 0
        errors: list[ItemError] = []
        pending = actions
        for attempt in range(self.max_retries + 1):
            answered: set[tuple[str, str]] = set()
            try:
                for ok, item in streaming_bulk(
                    self.es,
                    pending,
                    chunk_size=BULK_MAX_ACTIONS,
                    max_chunk_bytes=BULK_MAX_BYTES,
                    raise_on_error=False,
                    raise_on_exception=False,
                    max_retries=self.max_retries,
                    initial_backoff=self.initial_backoff,
                    max_backoff=30,
                    retry_on_status=RETRY_STATUSES,
                ):
                    op, info = next(iter(item.items()))
                    answered.add((info.get("_index", ""), str(info.get("_id"))))
                    if ok or (op == "delete" and info.get("status") == 404):
                        done += 1 if ok else 0
                    else:
                        exc = info.get("exception")
                        if isinstance(exc, TransportError) and not isinstance(exc, ApiError):
                            raise exc
                        errors.append(ItemError(str(info.get("_id")), _item_reason(info)))
                    for index in (info.get("_index"),):
                        if index:
                            self._dirty.add(index)
                return done, errors
            except (ApiError, TransportError) as exc:
                if isinstance(exc, ApiError):
                    raise self._unavailable(exc) from None
                pending = [a for a in pending if (a["_index"], a["_id"]) not in answered]
                if attempt == self.max_retries:
                    raise self._unavailable(exc) from None
                time.sleep(min(30.0, self.initial_backoff * 2**attempt))
        return done, errors

    def _search_response(self, index: str, body: dict[str, Any], search_type: str | None = None) -> dict[str, Any] | None:
        """The search response, or None when the indices do not exist yet."""
        self.refresh()
        return self._call(lambda: self.es.search(index=index, body=body, search_type=search_type).body, missing=None)

    def _search(self, index: str, body: dict[str, Any], search_type: str | None = None) -> list[dict[str, Any]]:
        resp = self._search_response(index, body, search_type)
        return resp["hits"]["hits"] if resp else []

    def _scan(
        self, index: str, query: dict[str, Any], sort: list[dict[str, str]], source: Any = True
    ) -> Iterator[dict[str, Any]]:
        """Every hit, in sort order, page by page with search_after (sort must be unique)."""
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {"query": query, "size": PAGE, "sort": sort, "_source": source, "track_total_hits": False}
            if after is not None:
                body["search_after"] = after
            hits = self._search(index, body)
            yield from hits
            if len(hits) < PAGE:
                return
            after = hits[-1]["sort"]

    def _call(self, fn: Callable[[], T], missing: Any = ...) -> T:
        """Run one client call; 404 gives ``missing`` when given, transport errors become StoreErrors."""
        try:
            return fn()
        except NotFoundError as exc:
            if missing is not ...:
                return missing
            raise self._unavailable(exc) from None
        except ConflictError:
            raise
        except (ApiError, TransportError) as exc:
            raise self._unavailable(exc) from None

    def _unavailable(self, exc: Exception) -> StoreError:
        where = f"Elasticsearch at {self.name}"
        if isinstance(exc, AuthenticationException):
            return StoreUnavailable(f"{where}: authentication failed (401); check ES_API_KEY or ES_USERNAME/ES_PASSWORD")
        if isinstance(exc, AuthorizationException):
            return StoreUnavailable(
                f"{where}: not allowed (403): {_reason(exc)}; check the privileges of the API key or user "
                f"on the {self.prefix}-* indices"
            )
        if isinstance(exc, ApiError):
            if exc.status_code in RETRY_STATUSES:
                return StoreUnavailable(f"{where}: overloaded or unavailable ({exc.status_code}: {_reason(exc)}); retry later")
            return StoreError(f"{where}: {exc.status_code} {_error_type(exc) or ''}: {_reason(exc)}")
        if isinstance(exc, TransportError):
            text = str(exc)
            hint = "check ES_CA_CERTS and the https URL" if "SSL" in text or "certificate" in text else (
                "check that it is running and that --store / INGEST_STORE is right"
            )
            return StoreUnavailable(f"{where}: cannot connect ({type(exc).__name__}: {text}); {hint}")
        return StoreUnavailable(f"{where}: {type(exc).__name__}: {exc}; check that it is running and reachable")


# --- small helpers -------------------------------------------------------------------------------


def _connect(url: str, request_timeout: float) -> Elasticsearch:
    """The client for ``url`` with credentials and TLS from the environment (ingest.config is the
    one place that reads them; ingest.store.es_connection builds the client). ``open_store``
    passes a client built from the command's full configuration instead."""
    from ingest.config import from_url
    from ingest.store.es_connection import connect

    return connect(from_url(url), request_timeout)


def _without_credentials(url: str) -> str:
    return re.sub(r"//[^/@]+@", "//", url)


def _build_of(index: str) -> str:
    return index.rsplit("_", 1)[-1]


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _holder_is_dead(lock: dict[str, Any]) -> bool:
    """True when the lock's process ran on this host and is gone (or a zombie): a killed run.

    A lock from another host can only expire (its TTL), since its process cannot be checked here.
    """
    pid = lock.get("pid")
    if lock.get("host") != socket.gethostname() or not isinstance(pid, int) or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _error_type(exc: ApiError) -> str | None:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    return error.get("type") if isinstance(error, dict) else None


def _reason(exc: ApiError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    if isinstance(error, dict):
        cause = (error.get("root_cause") or [error])[0]
        return str(cause.get("reason") or error.get("reason") or error.get("type"))
    return str(error or exc.message)


def _item_reason(info: dict[str, Any]) -> str:
    error = info.get("error")
    if isinstance(error, dict):
        reason = f"{error.get('type')}: {error.get('reason')}"
        cause = error.get("caused_by")
        if isinstance(cause, dict) and cause.get("reason"):
            reason += f" ({cause.get('reason')})"
        return reason
    return f"status {info.get('status')}: {error}"
