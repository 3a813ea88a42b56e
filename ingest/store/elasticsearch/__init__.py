"""The production store: Elasticsearch 9.x, behind :class:`ingest.store.base.Store`, one module per job:
:mod:`.store` (ElasticsearchStore: reads and writes), :mod:`.layout` (names, ownership, mappings,
analyzer, aliases), :mod:`.lock` (the lease lock), :mod:`.rebuild` (full rebuild and alias swap),
:mod:`.transport` (client calls, deadlines, retries, errors, bulk), :mod:`.writes` (chunks routed to
their label's index, deletes by ID), :mod:`.query` (the search query).

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
cover exactly what ``[roles]`` allows, with its access filter, and takes foreign indices out of our
aliases. Under its write lock a run deletes recorded indices outside the live build and our aliases
(a killed ``--full``'s half-built ones).

The write lock (``P-meta``, _id ``lock``) carries a random token; it is renewed with retries and
checked before every write batch, so a run that lost it stops (StoreLocked) and never writes again.
``timeout`` bounds every operation against a cluster that stops answering.

Access is separated by index: a chunk lives only in its label's index, so a key allowed to read
``P-chunks-public`` alone cannot reach a staff chunk by search or by ID. Each role alias also
carries the filter ``{"terms": {"access": [the role's labels]}}``, so a chunk copied outside ingest
into another label's index is still not returned through it. Searches additionally filter ``access``
inside the query.

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
read, when the lock is released, and in ``close()``; so a run's result is searchable when the run
returns, and no caller needs to refresh (``refresh()`` stays callable for older callers).

The first write to an empty cluster creates the indices and aliases (:meth:`ensure_layout`);
reads on an empty cluster find nothing instead of creating anything.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ingest.store.elasticsearch.layout_rules import DEFAULT_ANALYZER, LANGUAGE_ANALYZERS, analyzer_for, load_index_body
from ingest.store.elasticsearch.names import IndexNames, new_build

if TYPE_CHECKING:
    from ingest.store.elasticsearch.lock import LOCK_TTL_S
    from ingest.store.elasticsearch.query import as_of_filters, search_body
    from ingest.store.elasticsearch.store import ElasticsearchStore
    from ingest.store.elasticsearch.transport import BULK_MAX_ACTIONS, BULK_MAX_BYTES, PAGE

# What needs the Elasticsearch client is imported on first use: the no-op check of an unchanged run
# (:mod:`.unchanged_check`) lives in this package and must not import the client.
_LAZY = {
    "LOCK_TTL_S": "lock",
    "as_of_filters": "query",
    "search_body": "query",
    "ElasticsearchStore": "store",
    "BULK_MAX_ACTIONS": "transport",
    "BULK_MAX_BYTES": "transport",
    "PAGE": "transport",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "BULK_MAX_ACTIONS",
    "BULK_MAX_BYTES",
    "DEFAULT_ANALYZER",
    "LANGUAGE_ANALYZERS",
    "LOCK_TTL_S",
    "PAGE",
    "ElasticsearchStore",
    "IndexNames",
    "analyzer_for",
    "as_of_filters",
    "load_index_body",
    "new_build",
    "search_body",
]
