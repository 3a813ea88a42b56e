"""Stores behind one interface (:class:`ingest.store.base.Store`): embedded SQLite and Elasticsearch."""

from __future__ import annotations

import os

from ingest.settings import DEFAULT_LANGUAGE
from ingest.store.base import Store, StoreConfigError

DEFAULT_SQLITE = ".ingest/index.sqlite"


def resolve_store_url(store: str | None) -> str:
    """--store, else INGEST_STORE, else the embedded default."""
    return store or os.environ.get("INGEST_STORE") or f"sqlite:///{DEFAULT_SQLITE}"


def open_store(store: str | None = None, index_prefix: str | None = None, settings=None, create: bool = True) -> Store:
    """The store a URL names. ``create=False``: an embedded store that does not exist yet is
    an error on first use (for commands that only read), instead of a new empty file."""
    url = resolve_store_url(store)
    if url.startswith("sqlite:///"):
        from ingest.store.sqlite import SQLiteStore

        language = settings.search.language if settings is not None else DEFAULT_LANGUAGE
        return SQLiteStore(url[len("sqlite:///"):], create=create, language=language)
    if url.startswith(("http://", "https://")):
        from ingest.store.elasticsearch import ElasticsearchStore

        prefix = index_prefix or os.environ.get("INGEST_INDEX_PREFIX") or "ingest"
        return ElasticsearchStore(url, prefix=prefix, settings=settings)
    raise StoreConfigError(f"unknown store {url!r}: use sqlite:///PATH or http(s)://host:9200")
