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

Ownership: the meta document ``layout`` records every concrete index this prefix created; only
those are deleted or put behind its aliases (names are matched exactly, never by wildcard), so a
prefix that starts with another one (``kb``, ``kb-chunks_eu``) never touches the other's indices.
Every run first calls :meth:`ElasticsearchStore.reconcile_access`, which makes each role alias
cover exactly what ``[roles]`` allows and takes foreign indices out of our aliases.

The write lock (``P-meta``, _id ``lock``) carries a random token; it is renewed with retries and
checked before every write batch, so a run that lost it stops (StoreLocked) and never writes again.
``timeout`` bounds every operation against a cluster that stops answering.

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

import dataclasses
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from elasticsearch import (
    ApiError,
    AuthenticationException,
    AuthorizationException,
    ConflictError,
    ConnectionError,
    ConnectionTimeout,
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
    QueryTooLarge,
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
LAYOUT_ID = "layout"  # meta document: the concrete indices this prefix owns (see "Ownership")
BUILD_PATTERN = r"\d{8}t\d{6}-[0-9a-f]{6}"  # exactly what new_build() makes
DEFAULT_TIMEOUT_S = 30.0
SHORT_TIMEOUT_S = 5.0  # check(), lock release and refresh after a failure: the lock expires anyway
MAX_QUERY_TERMS = 1000  # x 3 searched fields stays under Elasticsearch's default 4096 clauses

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
    return datetime.now(UTC).strftime("%Y%m%dt%H%M%S") + "-" + secrets.token_hex(3)


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


def search_body(query: str, labels: Sequence[str], as_of: date | None, top: int, doc_id: str | None) -> dict[str, Any]:
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


@dataclasses.dataclass
class _Layout:
    """What one prefix owns (recorded in the meta index, document ``layout``)."""

    chunks: dict[str, str]  # label -> live concrete chunk index
    documents: str  # live documents index
    owned: list[str]  # every concrete index this prefix created (live build, half-built ones)
    roles: list[str]  # roles whose aliases ingest made (so a role dropped from [roles] loses its alias)


@dataclasses.dataclass
class _LockGuard:
    """The write lock one run took, as its writes see it (shared with the rebuild's store)."""

    owner: str
    token: str  # random, in the lock document: "still ours" means "still this token"
    acquired_at: datetime
    held: dict[str, int]  # seq_no / primary_term of our lock document (for conditional writes)
    lease_until: float  # time.monotonic() by which the lease runs out (with a margin) unless renewed
    expires_at: str  # the lease end written in the lock document
    lost: str | None = None  # why the run no longer holds it; never reset


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
        timeout: float = DEFAULT_TIMEOUT_S,
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
        # The longest one store operation (a request and its retries, or a bulk write making no
        # progress) waits for a cluster that does not answer before StoreUnavailable.
        self.timeout = timeout
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
        self._client = client or _connect(self.url, min(request_timeout, timeout))
        self._local = threading.local()  # the current operation's deadline (per thread)
        # A pinned build: this object writes to and reads from that build's concrete indices
        # (used inside full_rebuild). None: the live layout behind the aliases.
        self._build = build
        self._label_index: dict[str, str] | None = None  # label -> concrete index, once known
        self._documents_index: str | None = None
        self._dirty: set[str] = set()  # indices written since the last refresh
        self._meta_mapping_checked = False
        self._guard: _LockGuard | None = None  # the write lock this run holds (checked before writes)
        # Problems after the writes (lock release, final refresh): reported, counts intact.
        self.warnings: list[str] = []

    @property
    def es(self) -> Elasticsearch:
        """The client for one request: no client-side retries (ours are in _call and _bulk) and a
        request timeout bounded by what is left of the current operation's deadline."""
        return self._client.options(request_timeout=self._remaining(), max_retries=0)

    def _remaining(self) -> float:
        deadline = getattr(self._local, "deadline", None)
        return self.timeout if deadline is None else max(0.5, deadline - time.monotonic())

    @contextmanager
    def _operation(self, seconds: float | None = None) -> Iterator[float]:
        """One deadline for an operation and every request nested in it."""
        outer = getattr(self._local, "deadline", None)
        if outer is None:
            self._local.deadline = time.monotonic() + (self.timeout if seconds is None else seconds)
        try:
            yield self._local.deadline
        finally:
            if outer is None:
                self._local.deadline = None

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
        """The label of one of this prefix's chunk indices, matched exactly (build suffix format)."""
        found = re.fullmatch(re.escape(f"{self.prefix}-chunks_") + r"([a-z0-9][a-z0-9._-]*)_" + BUILD_PATTERN, index)
        return found[1] if found else None

    def desired_aliases(
        self, label_index: dict[str, str], documents_index: str, roles: Mapping[str, Sequence[str]] | None = None
    ) -> set[tuple[str, str]]:
        """(index, alias) pairs of a complete layout for the configured labels and roles."""
        roles = self.settings.roles if roles is None else roles
        pairs = {(index, self.all_alias) for index in label_index.values()}
        for role, labels in roles.items():
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
            self._client.options(request_timeout=min(SHORT_TIMEOUT_S, self.timeout), max_retries=0).cluster.health()
        except AuthorizationException:
            # Answered and authenticated: credentials that may read a role alias only (the
            # real-world reader) lack the cluster privilege `monitor`; what they may read decides.
            return
        except Exception as exc:  # noqa: BLE001 - every failure becomes one clear message
            raise self._unavailable(exc) from None

    def close(self) -> None:
        try:
            with self._operation(min(SHORT_TIMEOUT_S, self.timeout)):
                self.refresh()
        except StoreError as exc:
            self.warnings.append(
                f"the final refresh failed ({exc}); Elasticsearch makes the writes searchable at its next refresh"
            )
        finally:
            if self._owns_client:
                self._client.close()

    def refresh(self) -> None:
        """Make everything written so far searchable."""
        if not self._dirty:
            return
        indices = ",".join(sorted(self._dirty))
        self._call(lambda: self.es.indices.refresh(index=indices, ignore_unavailable=True))
        self._dirty.clear()

    # --- layout and ownership ------------------------------------------------------------
    # The meta document LAYOUT_ID records the concrete indices this prefix owns: the live build
    # (label -> index, documents index) and every index it created (a half-built rebuild of a
    # killed run included). Only recorded indices are ever deleted, created under an alias, or
    # kept in one of this prefix's aliases; names are never matched by wildcard, so a prefix
    # that starts with another (``kb`` and ``kb-chunks_eu``) can never touch the other's indices.

    def _read_layout(self) -> _Layout | None:
        """The recorded layout; for a prefix written by an older ingest, the one its aliases
        show (exact names only); None when the prefix holds nothing yet."""
        found = self._call(lambda: self.es.get(index=self.meta_index, id=LAYOUT_ID), missing=None)
        if found:
            values = found["_source"]["values"]
            return _Layout(
                dict(values["chunks"]), values["documents"], list(values["owned"]), list(values.get("roles", []))
            )
        chunk_name = re.compile(
            re.escape(f"{self.prefix}-chunks_") + r"([a-z0-9][a-z0-9._-]*)_" + BUILD_PATTERN + r"\Z"
        )
        documents_name = re.compile(re.escape(f"{self.prefix}-documents_") + BUILD_PATTERN + r"\Z")
        chunks: dict[str, str] = {}
        documents: list[str] = []
        for index, alias in self._alias_rows([self.all_alias, self.documents_alias]):
            match = chunk_name.match(index)
            if alias == self.all_alias and match and (match[1] in self.settings.labels or "_" not in match[1]):
                chunks[match[1]] = index
            elif alias == self.documents_alias and documents_name.match(index):
                documents.append(index)
        if not documents:
            return None
        documents_index = max(documents)
        return _Layout(chunks, documents_index, sorted({*chunks.values(), documents_index}), [])

    def _record_layout(self, layout: _Layout) -> None:
        self._assert_lock()
        document = {"values": dataclasses.asdict(layout)}
        self._call(lambda: self.es.index(index=self.meta_index, id=LAYOUT_ID, document=document, refresh=True))

    def _alias_rows(self, names: Sequence[str]) -> list[tuple[str, str]]:
        """(index, alias) for these exact alias names (missing ones are simply absent)."""
        rows = self._call(
            lambda: self.es.cat.aliases(name=",".join(names), format="json", expand_wildcards="all").body, missing=[]
        )
        return [(row["index"], row["alias"]) for row in rows if row.get("alias") in names]

    def _existing(self, indices: Sequence[str]) -> dict[str, set[str]]:
        """Which of these concrete indices exist, with their aliases."""
        if not indices:
            return {}
        found = self._call(
            lambda: self.es.indices.get_alias(index=",".join(indices), ignore_unavailable=True).body, missing={}
        )
        return {index: set(spec.get("aliases", {})) for index, spec in found.items() if index in indices}

    def _refuse_foreign_names(self, roles: Iterable[str]) -> None:
        """Concrete indices that carry the names of this prefix's aliases belong to someone else:
        refuse before anything is created or written."""
        names = [self.all_alias, self.documents_alias, *(self.role_alias(r) for r in roles)]
        found = self._call(
            lambda: self.es.indices.get_alias(index=",".join(names), ignore_unavailable=True).body, missing={}
        )
        foreign = sorted(set(found) & set(names))
        if foreign:
            raise StoreConfigError(
                f"Elasticsearch at {self.name}: {', '.join(foreign)} already exist as indices, where ingest keeps its "
                f"aliases for index prefix {self.prefix!r}; ingest will not write over them. Delete or rename "
                "them, or use another --index-prefix."
            )

    def _check_mappings(self, label_index: dict[str, str], documents_index: str, report: bool = False) -> list[str]:
        """Indices changed by hand (e.g. recreated with another mapping) are refused before writing
        (``report``: listed instead)."""
        targets = {index: "chunks" for index in label_index.values()} | {documents_index: "documents"}
        found = self._call(
            lambda: self.es.indices.get_mapping(index=",".join(targets), ignore_unavailable=True).body, missing={}
        )
        problems: list[str] = []
        for index, kind in targets.items():
            expected = load_index_body(kind, self.analyzer)["mappings"]["properties"]
            actual = found.get(index, {}).get("mappings", {}).get("properties", {})
            if index in found:
                drift = sorted(_mapping_drift(expected, actual), key=lambda p: p.endswith("is missing"))
                problems += [f"{index}: {p}" for p in drift]
        if problems and not report:
            raise StoreConfigError(
                f"Elasticsearch at {self.name}: indices of prefix {self.prefix!r} do not have ingest's mapping "
                f"({'; '.join(problems[:5])}); they were changed outside ingest. Run `ingest run --full` to "
                "rebuild them (the changed build is dropped once the new one is live)."
            )
        return problems

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
        self._refuse_foreign_names(self.settings.roles)
        layout = self._read_layout() or _Layout({}, "", [], [])
        if not layout.documents or set(self.settings.labels) - set(layout.chunks):
            self._check_analyzer()  # before anything is created with it
        if not layout.documents:  # nothing live yet (or only a first --full that was killed)
            layout.documents = self.documents_index(new_build())
        build = _build_of(layout.documents)
        for label in self.settings.labels:
            layout.chunks.setdefault(label, self.chunk_index(label, build))
        needed = [*layout.chunks.values(), layout.documents]
        layout.owned = sorted({*layout.owned, *needed})
        layout.roles = sorted({*layout.roles, *self.settings.roles})
        self._record_layout(layout)  # recorded before created: a killed run leaves only owned names
        existing = self._existing(needed)
        for index in needed:
            if index not in existing:
                kind = "documents" if index == layout.documents else "chunks"
                self._call(lambda: self._create_index(index, kind))
        self._check_mappings(layout.chunks, layout.documents)
        actions, _ = self._access_plan(layout, self.settings.roles, check=False)
        if actions:
            self._assert_lock()
            self._call(lambda: self.es.indices.update_aliases(actions=actions))
        self._label_index, self._documents_index = layout.chunks, layout.documents

    def reconcile_access(
        self, roles: Mapping[str, Sequence[str]] | None = None, *, check: bool = False, full: bool = False
    ) -> list[str]:
        """Make every alias of this prefix exactly what ``roles`` allows, in one atomic call: role
        aliases over exactly their labels' live indices, no index of another owner in any of our
        aliases. One line per change (``check``: per mismatch, nothing changed). Creates nothing.

        Refused (StoreConfigError) before anything is read or written: concrete indices under our
        alias names, and, unless ``full`` (a rebuild replaces the live build), live indices whose
        mapping was changed by hand (``check`` lists those instead)."""
        roles = self.settings.roles if roles is None else roles
        self._refuse_foreign_names(roles)
        layout = self._read_layout()
        if layout is None or not layout.documents:
            return []
        drift = [] if full else self._check_mappings(layout.chunks, layout.documents, report=check)
        actions, changes = self._access_plan(layout, roles, check=check)
        changes += [f"mapping changed outside ingest: {problem}" for problem in drift]
        if actions and not check:
            self._assert_lock()
            self._call(lambda: self.es.indices.update_aliases(actions=actions))
        return changes

    def _access_plan(
        self, layout: _Layout, roles: Mapping[str, Sequence[str]], check: bool
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """The _aliases actions that make the aliases match ``layout`` and ``roles``, and what each does."""
        role_prefix = f"{self.all_alias}-"
        ours = {self.all_alias, self.documents_alias, *(self.role_alias(r) for r in (*roles, *layout.roles))}
        owned = self._existing(layout.owned)
        current = {
            (index, alias)
            for index, aliases in owned.items()
            for alias in aliases
            if alias in ours or alias.startswith(role_prefix)
        }
        current |= set(self._alias_rows(sorted(ours)))
        desired = {pair for pair in self.desired_aliases(layout.chunks, layout.documents, roles) if pair[0] in owned}
        actions: list[dict[str, Any]] = []
        changes: list[str] = []
        for index, alias in sorted(current - desired):
            if index not in owned:
                why = f"{index} is not an index of prefix {self.prefix!r}"
            elif index not in {*layout.chunks.values(), layout.documents}:
                why = "not the live build"
            elif alias.startswith(role_prefix) and alias[len(role_prefix) :] not in roles:
                why = f"role {alias[len(role_prefix) :]!r} is not in [roles]"
            elif alias.startswith(role_prefix):
                why = f"[roles] does not let {alias[len(role_prefix) :]!r} read {self.label_of_index(index)!r}"
            else:
                why = "not part of this layout"
            actions.append({"remove": {"index": index, "alias": alias, "must_exist": False}})
            changes.append(
                f"alias {alias} covers {index} ({why})" if check else f"removed {index} from alias {alias} ({why})"
            )
        for index, alias in sorted(desired - current):
            actions.append({"add": {"index": index, "alias": alias}})
            changes.append(f"alias {alias} lacks {index}" if check else f"added {index} to alias {alias}")
        return actions, changes

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
            'set [search] language = "none" in ingest.toml for the standard analyzer'
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
    # One lock document per prefix, created with op_type=create (one winner), carrying a random
    # token. A keeper thread renews the lease every third of the TTL, retrying with backoff
    # until the lease would run out; before every write batch the store checks that the lock
    # document still carries its token and the lease has not run out, else it raises
    # StoreLocked and never writes again (the guard stays lost).

    @contextmanager
    def lock(self, owner: str, wait_s: float = 0.0) -> Iterator[None]:
        if self._build is not None:
            raise StoreError("lock() is taken on the live store, not inside full_rebuild()")
        self._call(self._ensure_meta_index)
        guard = self._acquire(owner, wait_s)
        stop = threading.Event()
        keeper = threading.Thread(target=self._keep_lock, args=(guard, stop), daemon=True)
        keeper.start()
        self._guard = guard
        completed = False
        try:
            # A run killed before its writes were refreshed left them acknowledged but not yet
            # searchable. Refresh everything now, so this run's repair and plan read one
            # consistent state (else it could see a record without its chunks, or the reverse).
            # Inside the try: if this fails, the lock is still released.
            self._call(
                lambda: self.es.indices.refresh(
                    index=f"{self.all_alias},{self.documents_alias}", ignore_unavailable=True, allow_no_indices=True
                ),
                missing=None,
            )
            yield
            completed = True
        finally:
            stop.set()
            keeper.join(SHORT_TIMEOUT_S + 1)
            self._guard = None
            if completed:
                try:
                    with self._operation(min(SHORT_TIMEOUT_S, self.timeout)):
                        self.refresh()
                except StoreError as exc:
                    self.warnings.append(
                        f"written, but the final refresh failed ({exc}); Elasticsearch makes the writes searchable at its next refresh"
                    )
            self._release(guard)

    def _acquire(self, owner: str, wait_s: float) -> _LockGuard:
        token = secrets.token_hex(8)
        deadline = time.monotonic() + max(0.0, wait_s)
        while True:
            now = datetime.now(UTC)
            doc = self._lock_doc(owner, token, now)
            started = time.monotonic()
            try:
                resp = self._call(lambda: self.es.create(index=self.meta_index, id=LOCK_ID, document=doc))
                return _LockGuard(
                    owner,
                    token,
                    now,
                    {"seq_no": resp["_seq_no"], "primary_term": resp["_primary_term"]},
                    started + self.lock_ttl_s * 0.9,
                    doc["expires_at"],
                )
            except ConflictError:
                pass
            current = self._call(lambda: self.es.get(index=self.meta_index, id=LOCK_ID), missing=None)
            if current is None:
                continue  # released in between: try again at once
            src = current["_source"]
            if (src.get("values") or {}).get("token") == token:
                # Our create landed but its answer was lost (a retried request): it is ours.
                return _LockGuard(
                    owner,
                    token,
                    now,
                    {"seq_no": current["_seq_no"], "primary_term": current["_primary_term"]},
                    started + self.lock_ttl_s * 0.9,
                    src["expires_at"],
                )
            if _parse_iso(src["expires_at"]) <= now or _holder_is_dead(src):
                # Expired, or its process is gone (killed on this host): take it over,
                # but only if nobody else did in between.
                try:
                    self._call(
                        lambda: self.es.delete(
                            index=self.meta_index,
                            id=LOCK_ID,
                            if_seq_no=current["_seq_no"],
                            if_primary_term=current["_primary_term"],
                        )
                    )
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

    def _lock_doc(self, owner: str, token: str, acquired_at: datetime) -> dict[str, Any]:
        expires = datetime.now(UTC) + timedelta(seconds=self.lock_ttl_s)
        return {
            "owner": owner,
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "acquired_at": _iso(acquired_at),
            "expires_at": _iso(expires),
            "values": {"token": token},
        }

    def _keep_lock(self, guard: _LockGuard, stop: threading.Event) -> None:
        """Push expires_at forward every third of the TTL; retry a failed renewal with backoff
        until the lease would run out, then mark the lock lost (the next write batch stops)."""
        client = self._client.options(request_timeout=max(1.0, min(self.timeout, self.lock_ttl_s / 3)), max_retries=0)
        while not stop.wait(self.lock_ttl_s / 3):
            backoff = min(1.0, self.lock_ttl_s / 20)
            while guard.lost is None:
                doc = self._lock_doc(guard.owner, guard.token, guard.acquired_at)
                started = time.monotonic()
                try:
                    resp = client.index(
                        index=self.meta_index,
                        id=LOCK_ID,
                        document=doc,
                        if_seq_no=guard.held["seq_no"],
                        if_primary_term=guard.held["primary_term"],
                    )
                    guard.held.update(seq_no=resp["_seq_no"], primary_term=resp["_primary_term"])
                    guard.lease_until, guard.expires_at = started + self.lock_ttl_s * 0.9, doc["expires_at"]
                    break
                except ConflictError:
                    # Our own earlier renewal may have landed with its answer lost: still ours?
                    try:
                        current = client.get(index=self.meta_index, id=LOCK_ID)
                    except Exception:  # noqa: BLE001 - gone or unreachable: decided below
                        current = None
                    if current is not None and (current["_source"].get("values") or {}).get("token") == guard.token:
                        guard.held.update(seq_no=current["_seq_no"], primary_term=current["_primary_term"])
                        continue
                    owner = current["_source"].get("owner") if current is not None else None
                    guard.lost = (
                        f"it was taken over by {owner}" if owner else "the lock document changed under this run"
                    )
                except Exception as exc:  # noqa: BLE001 - any failure is retried until the lease runs out
                    if stop.is_set():
                        return
                    if time.monotonic() + backoff >= guard.lease_until:
                        guard.lost = f"its lease could not be renewed ({type(exc).__name__}: {exc}) and ran out at {guard.expires_at}"
                    elif stop.wait(backoff):
                        return
                    backoff = min(backoff * 2, max(1.0, self.lock_ttl_s / 6))
            if guard.lost is not None:
                return

    def _assert_lock(self) -> None:
        """Before every write batch: is the lock this run took still ours (same token, lease not
        run out)? Else stop for good with StoreLocked. No-op when no lock is held (tests)."""
        guard = self._guard
        if guard is None:
            return
        if guard.lost is None and time.monotonic() >= guard.lease_until:
            guard.lost = f"its lease ran out at {guard.expires_at} without a successful renewal"
        if guard.lost is None:
            current = self._call(lambda: self.es.get(index=self.meta_index, id=LOCK_ID), missing=None)
            src = current["_source"] if current is not None else None
            if src is None:
                guard.lost = "the lock document is gone (expired and taken, or deleted by hand)"
            elif (src.get("values") or {}).get("token") != guard.token:
                guard.lost = f"it was taken over by {src.get('owner')} (since {src.get('acquired_at')})"
        if guard.lost is not None:
            raise StoreLocked(
                f"lost the write lock on prefix {self.prefix!r} at {self.name}: {guard.lost}. This run stopped "
                "before its next write and writes nothing more; run again (the next run repairs what it left)."
            )

    def _release(self, guard: _LockGuard) -> None:
        """Delete our lock document; a failure is a warning (the lease runs out by itself)."""
        client = self._client.options(request_timeout=min(SHORT_TIMEOUT_S, self.timeout), max_retries=0)
        give_up = time.monotonic() + min(SHORT_TIMEOUT_S, self.timeout)
        for attempt in range(3):
            try:
                client.delete(
                    index=self.meta_index,
                    id=LOCK_ID,
                    if_seq_no=guard.held["seq_no"],
                    if_primary_term=guard.held["primary_term"],
                )
                return
            except (ConflictError, NotFoundError):
                return  # taken over after expiry: not ours to delete
            except Exception as exc:  # noqa: BLE001 - reported as a warning below
                if attempt == 2 or time.monotonic() + 0.2 * 2**attempt >= give_up:
                    self.warnings.append(
                        f"could not release the write lock on prefix {self.prefix!r} ({self._unavailable(exc)}); "
                        f"it expires by itself at {guard.expires_at} (at once for a run on this host once this process ends)"
                    )
                    return
                time.sleep(0.2 * 2**attempt)

    # --- full rebuild ----------------------------------------------------------------------
    @contextmanager
    def full_rebuild(self) -> Iterator[ElasticsearchStore]:
        if self._build is not None:
            raise StoreError("full_rebuild() cannot be nested")
        build = new_build()
        fill_settings = {"refresh_interval": "-1", "number_of_replicas": 0}
        new_labels = {label: self.chunk_index(label, build) for label in self.settings.labels}
        new_documents = self.documents_index(build)
        new_indices = [*new_labels.values(), new_documents]
        self._check_analyzer()
        self._call(self._ensure_meta_index)
        self._refuse_foreign_names(self.settings.roles)
        old = self._read_layout()
        # Recorded as owned before they exist: a killed rebuild leaves only indices the next
        # full run knows to delete.
        # (A first build has no live layout yet: nothing to put behind the aliases until the switch.)
        pending = old or _Layout({}, "", [], [])
        pending = dataclasses.replace(pending, owned=sorted({*pending.owned, *new_indices}))
        self._record_layout(pending)
        try:
            for index in new_labels.values():
                self._call(lambda: self._create_index(index, "chunks", fill_settings))
            self._call(lambda: self._create_index(new_documents, "documents", fill_settings))
            fresh = ElasticsearchStore(
                self.url,
                self.prefix,
                self.settings,
                analyzer=self.analyzer,
                lock_ttl_s=self.lock_ttl_s,
                max_retries=self.max_retries,
                initial_backoff=self.initial_backoff,
                timeout=self.timeout,
                client=self._client,
                build=build,
            )
            fresh._guard = self._guard
            yield fresh
            live = _Layout(
                dict(new_labels), new_documents, pending.owned, sorted({*pending.roles, *self.settings.roles})
            )
            self._switch_to(live)
        except BaseException:
            # Not switched: readers still use the old build; drop the half-built one (best effort:
            # it stays recorded as owned, so the next full run deletes it).
            try:
                self._client.options(request_timeout=min(SHORT_TIMEOUT_S, self.timeout), max_retries=0).indices.delete(
                    index=",".join(new_indices), ignore_unavailable=True
                )
            except Exception:  # noqa: BLE001 - the original error is what the run reports
                pass
            raise
        self._label_index, self._documents_index = None, None
        self._dirty.clear()
        old_indices = [index for index in live.owned if index not in new_indices]
        try:
            if old_indices:
                self._call(lambda: self.es.indices.delete(index=",".join(old_indices), ignore_unavailable=True))
            self._record_layout(dataclasses.replace(live, owned=sorted(new_indices)))
        except StoreError as exc:
            self.warnings.append(
                f"the new build is live, but dropping the old one failed ({exc}); the next full run drops it"
            )

    def _switch_to(self, live: _Layout) -> None:
        """Finish the new build and move every alias to it in one atomic call; then record it."""
        new_indices = [*live.chunks.values(), live.documents]
        replicas = self._replicas_of([i for i in live.owned if i not in new_indices])
        self._call(
            lambda: self.es.indices.put_settings(
                index=",".join(new_indices),
                settings={"index": {"refresh_interval": None, "number_of_replicas": replicas}},
            )
        )
        self._call(lambda: self.es.indices.refresh(index=",".join(new_indices)))
        if replicas:
            self._call(
                lambda: self.es.cluster.health(index=",".join(new_indices), wait_for_status="yellow", timeout="60s")
            )
        actions, _ = self._access_plan(live, self.settings.roles, check=False)
        self._assert_lock()
        self._call(lambda: self.es.indices.update_aliases(actions=actions))  # the one atomic switch
        self._record_layout(live)

    def _replicas_of(self, indices: list[str]) -> int | None:
        """The replica count the live build had (None: the cluster default)."""
        existing = sorted(self._existing(indices))
        if not existing:
            return None
        found = self._call(lambda: self.es.indices.get_settings(index=existing[0], name="index.number_of_replicas"))
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
            raise StoreError(
                f"Elasticsearch at {self.name}: document record {errors[0].id} refused: {errors[0].reason}"
            )

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
                actions.append(
                    {"_op_type": "index", "_index": index, "_id": chunk.chunk_id, "_source": self.chunk_source(chunk)}
                )
            # A chunk whose label changed (same ID) leaves its old label's index first: a copy
            # left under the old label would stay readable by roles the new label excludes (and
            # the record, listing the ID, would never show it as an orphan). A copy that cannot be
            # removed refuses that chunk; one removed but not yet rewritten is missing, which the
            # next run's repair notices.
            moves = [
                {"_op_type": "delete", "_index": index, "_id": chunk_id}
                for chunk_id, index in self._locate(list(targets))
                if index != targets[chunk_id]
            ]
            if moves:
                _, move_errors = self._bulk(moves)
                stuck = {e.id for e in move_errors}
                report.errors.extend(
                    ItemError(e.id, f"its copy under its old access label could not be removed: {e.reason}")
                    for e in move_errors
                )
                actions = [a for a in actions if a["_id"] not in stuck]
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
        if self._label_index is not None:
            label_index = self._label_index
        else:
            layout = self._read_layout()
            label_index = layout.chunks if layout else {}
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
            query = {
                "bool": {
                    "filter": [
                        {"term": {"doc_id": chunk.doc_id}},
                        {"term": {"version": chunk.version}},
                        {"range": {"position": bounds}},
                    ]
                }
            }
            body = {"query": query, "size": n, "sort": [{"position": order}, {"chunk_id": order}]}
            return [Chunk.from_json(hit["_source"]) for hit in self._search(self._chunks_read_target(), body)]

        before = around({"gte": chunk.position - n, "lt": chunk.position}, "desc")
        after = around({"gt": chunk.position, "lte": chunk.position + n}, "asc")
        return list(reversed(before)), after

    def chunk_keys(self) -> list[tuple[str, str, str]]:
        hits = self._scan(
            self._chunks_read_target(),
            {"match_all": {}},
            [{"chunk_id": "asc"}],
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
        terms = len(set(re.findall(r"\w+", query.lower())))
        if terms > MAX_QUERY_TERMS:
            raise QueryTooLarge(
                f"the query has {terms} distinct words; at most {MAX_QUERY_TERMS} can be searched at once: shorten it"
            )
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
        self._assert_lock()
        merged = {**self._stored_meta(), **{k: str(v) for k, v in values.items()}}
        self._call(lambda: self.es.index(index=self.meta_index, id=META_ID, document={"values": merged}, refresh=True))

    # --- transport -------------------------------------------------------------------------
    def _bulk(self, actions: list[dict[str, Any]]) -> tuple[int, list[ItemError]]:
        """Send actions in bounded requests; (how many succeeded, every item still refused).

        Per-item and per-request 429/502/503/504 are retried by streaming_bulk with backoff; an
        item still refused for overload after that stops the write (StoreUnavailable). A
        connection failure retries the items not yet answered, with backoff, until no item has
        been answered for ``timeout`` seconds, then gives up with StoreUnavailable. Any other
        refusal (a mapping error, an immense term, a 500 on the request) is an ItemError.
        Before every attempt the store checks it still holds its write lock.
        """
        done = 0
        errors: list[ItemError] = []
        pending = actions
        last_progress = time.monotonic()
        attempt = 0
        while pending:
            self._assert_lock()
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
                    max_backoff=max(1.0, min(30.0, self.timeout / 4)),
                    retry_on_status=RETRY_STATUSES,
                ):
                    op, info = next(iter(item.items()))
                    answered.add((info.get("_index", ""), str(info.get("_id"))))
                    last_progress = time.monotonic()
                    if info.get("_index"):
                        self._dirty.add(info["_index"])
                    if ok or (op == "delete" and info.get("status") == 404):
                        done += 1 if ok else 0
                        continue
                    exc = info.get("exception")
                    if isinstance(exc, TransportError) and not isinstance(exc, ApiError):
                        raise exc
                    if info.get("status") in RETRY_STATUSES:
                        raise (
                            self._unavailable(exc)
                            if isinstance(exc, ApiError)
                            else StoreUnavailable(
                                f"Elasticsearch at {self.name}: overloaded or unavailable (status {info.get('status')} "
                                f"after {self.max_retries} retries: {_item_reason(info)}); retry later"
                            )
                        )
                    errors.append(ItemError(str(info.get("_id")), _item_reason(info)))
                return done, errors
            except (ApiError, TransportError) as exc:
                if isinstance(exc, ApiError):
                    raise self._unavailable(exc) from None
                pending = [a for a in pending if (a["_index"], a["_id"]) not in answered]
                wait = min(5.0, self.initial_backoff * 2**attempt)
                limit = min(2, self.max_retries) if _refused(exc) else self.max_retries
                if attempt >= limit or time.monotonic() - last_progress + wait >= self.timeout:
                    raise self._unavailable(exc) from None
                time.sleep(wait)
                attempt += 1
        return done, errors

    def _search_response(
        self, index: str, body: dict[str, Any], search_type: str | None = None
    ) -> dict[str, Any] | None:
        """The search response, or None when the indices do not exist yet. A shard that failed
        or timed out is an error with its reason, never fewer hits."""
        self.refresh()
        resp = self._call(lambda: self.es.search(index=index, body=body, search_type=search_type).body, missing=None)
        if resp is not None:
            shards = resp.get("_shards") or {}
            if shards.get("failed") or resp.get("timed_out"):
                failures = shards.get("failures") or [{}]
                reason = (failures[0].get("reason") or {}) if isinstance(failures[0], dict) else {}
                detail = (
                    f"{failures[0].get('index', '?')}: {reason.get('type', 'timed out')}: {reason.get('reason', '')}"
                )
                raise StoreUnavailable(
                    f"Elasticsearch at {self.name}: {shards.get('failed', 0)} of {shards.get('total', '?')} shards "
                    f"failed for {index} ({detail}); results would be incomplete. `ingest run` repairs the "
                    "aliases if an index that is not ingest's was added to them."
                )
        return resp

    def _search(self, index: str, body: dict[str, Any], search_type: str | None = None) -> list[dict[str, Any]]:
        resp = self._search_response(index, body, search_type)
        return resp["hits"]["hits"] if resp else []

    def _scan(
        self, index: str, query: dict[str, Any], sort: list[dict[str, str]], source: Any = True
    ) -> Iterator[dict[str, Any]]:
        """Every hit, in sort order, page by page with search_after (sort must be unique)."""
        after: list[Any] | None = None
        while True:
            body: dict[str, Any] = {
                "query": query,
                "size": PAGE,
                "sort": sort,
                "_source": source,
                "track_total_hits": False,
            }
            if after is not None:
                body["search_after"] = after
            hits = self._search(index, body)
            yield from hits
            if len(hits) < PAGE:
                return
            after = hits[-1]["sort"]

    def _call(self, fn: Callable[[], T], missing: Any = ...) -> T:
        """Run one client call; 404 gives ``missing`` when given, transport errors become StoreErrors.

        Connection failures and 429/502/503/504 are retried with backoff within the operation's
        deadline (``timeout``); each request waits at most what is left of it.
        """
        with self._operation() as deadline:
            attempt = 0
            while True:
                try:
                    return fn()
                except NotFoundError as exc:
                    if missing is not ...:
                        return missing
                    raise self._unavailable(exc) from None
                except ConflictError:
                    raise
                except (ApiError, TransportError) as exc:
                    transient = isinstance(exc, (ConnectionError, ConnectionTimeout)) or (
                        isinstance(exc, ApiError) and exc.status_code in RETRY_STATUSES
                    )
                    wait = min(5.0, self.initial_backoff * 2**attempt)
                    limit = min(2, self.max_retries) if _refused(exc) else self.max_retries
                    if not transient or attempt >= limit or time.monotonic() + wait >= deadline:
                        raise self._unavailable(exc) from None
                    time.sleep(wait)
                    attempt += 1

    def _unavailable(self, exc: Exception) -> StoreError:
        where = f"Elasticsearch at {self.name}"
        if isinstance(exc, AuthenticationException):
            return StoreUnavailable(
                f"{where}: authentication failed (401); check ES_API_KEY or ES_USERNAME/ES_PASSWORD"
            )
        if isinstance(exc, AuthorizationException):
            return StoreUnavailable(
                f"{where}: not allowed (403): {_reason(exc)}; check the privileges of the API key or user "
                f"on the {self.prefix}-* indices"
            )
        if isinstance(exc, ApiError):
            if _root_type(exc).startswith("too_many"):
                return QueryTooLarge(f"{where}: the query is too large to run ({_reason(exc)}); use fewer words")
            if exc.status_code in RETRY_STATUSES:
                return StoreUnavailable(
                    f"{where}: overloaded or unavailable ({exc.status_code}: {_reason(exc)}); retry later"
                )
            return StoreError(f"{where}: {exc.status_code} {_error_type(exc) or ''}: {_reason(exc)}")
        if isinstance(exc, ConnectionTimeout):
            return StoreUnavailable(
                f"{where}: no answer within {self.timeout:g} s (the store timeout); check that it is running and not overloaded"
            )
        if isinstance(exc, TransportError):
            text = str(exc)
            hint = (
                "check ES_CA_CERTS and the https URL"
                if "SSL" in text or "certificate" in text
                else ("check that it is running and that --store / INGEST_STORE is right")
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


def _refused(exc: Exception) -> bool:
    """Nothing listens there (a wrong URL, a stopped node): retried briefly only, to fail fast."""
    text = f"{exc!r} {exc.__cause__!r}".lower()
    return "refused" in text or "failed to establish a new connection" in text


def _root_type(exc: ApiError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    if isinstance(error, dict):
        return str(((error.get("root_cause") or [error])[0]).get("type") or error.get("type") or "")
    return ""


def _mapping_drift(expected: dict[str, Any], actual: dict[str, Any], path: str = "") -> list[str]:
    """How an index's field types differ from ingest's mapping (missing fields, other types)."""
    problems: list[str] = []
    for name, spec in expected.items():
        found = actual.get(name)
        want = spec.get("type", "object")
        if found is None:
            problems.append(f"field {path}{name} is missing")
            continue
        if found.get("type", "object") != want:
            problems.append(f"field {path}{name} is {found.get('type', 'object')}, ingest expects {want}")
            continue
        problems += _mapping_drift(spec.get("fields", {}), found.get("fields", {}), f"{path}{name}.")
        problems += _mapping_drift(spec.get("properties", {}), found.get("properties", {}), f"{path}{name}.")
    return problems


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
