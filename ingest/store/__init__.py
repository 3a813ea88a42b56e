"""Stores behind one interface (:class:`ingest.store.base.Store`): embedded SQLite and Elasticsearch."""

from __future__ import annotations

import os

from ingest.store.base import Store, StoreError

DEFAULT_SQLITE = ".ingest/index.sqlite"


def resolve_store_url(store: str | None) -> str:
    """--store, else INGEST_STORE, else the embedded default."""
    return store or os.environ.get("INGEST_STORE") or f"sqlite:///{DEFAULT_SQLITE}"


def open_store(store: str | None = None, index_prefix: str | None = None, settings=None) -> Store:
    url = resolve_store_url(store)
    if url.startswith("sqlite:///"):
        from ingest.store.sqlite import SQLiteStore

        return SQLiteStore(url[len("sqlite:///"):])
    if url.startswith(("http://", "https://")):
        from ingest.store.elasticsearch import ElasticsearchStore

        prefix = index_prefix or os.environ.get("INGEST_INDEX_PREFIX") or "ingest"
        return ElasticsearchStore(url, prefix=prefix, settings=settings)
    raise StoreError(f"unknown store {url!r}: use sqlite:///PATH or http(s)://host:9200")
