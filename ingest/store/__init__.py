"""Stores behind one interface (:class:`ingest.store.base.Store`): embedded SQLite and Elasticsearch.

Which store and how to reach it is decided once by :mod:`ingest.config`; :func:`open_store`
takes that decision (a :class:`~ingest.config.ConnectionConfig`) and opens the store.
"""

from __future__ import annotations

from ingest.config import DEFAULT_SQLITE, ConfigError, ConnectionConfig, resolve
from ingest.settings import DEFAULT_LANGUAGE, Settings
from ingest.store.base import NoIngestIndex, Store, StoreConfigError, StoreError, StoreUnavailable

__all__ = [
    "DEFAULT_SQLITE",
    "NoIngestIndex",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "open_store",
    "require_ingest_index",
    "resolve_store_url",
]


def resolve_store_url(store: str | None) -> str:
    """--store, else the environment (see ingest.config), else the embedded default."""
    return resolve(store).url or "elastic-cloud"


def open_store(
    config: ConnectionConfig | str | None = None,
    index_prefix: str | None = None,
    settings: Settings | None = None,
    create: bool = True,
) -> Store:
    """The store a connection configuration names (a URL string or None resolves it here).

    ``create=False``: an embedded store that does not exist yet is an error on first use (for
    commands that only read), instead of a new empty file."""
    if not isinstance(config, ConnectionConfig):
        config = resolve(config, index_prefix=index_prefix)
    elif index_prefix:
        from dataclasses import replace

        config = replace(config, index_prefix=index_prefix)
    if config.kind == "sqlite":
        from ingest.store.sqlite import SQLiteStore

        language = settings.search.language if settings is not None else DEFAULT_LANGUAGE
        return SQLiteStore(config.sqlite_path, create=create, language=language)
    from ingest.store.elasticsearch import ElasticsearchStore
    from ingest.store.elasticsearch.transport import DEFAULT_TIMEOUT_S
    from ingest.store.es_connection import connect

    try:
        client = connect(config, request_timeout=config.timeout or 30.0)
    except ConfigError as exc:
        raise StoreConfigError(str(exc)) from None
    try:
        store = ElasticsearchStore(
            config.url or config.display,
            prefix=config.index_prefix,
            settings=settings,
            analyzer=config.analyzer or None,
            client=client,
            # The store's own deadline for a cluster that stops answering (each operation).
            timeout=config.timeout or DEFAULT_TIMEOUT_S,
        )
    except BaseException:
        client.close()
        raise
    store._owns_client = True  # built here from the full configuration; closed with the store
    return store


def require_ingest_index(store: Store, role: str | None = None) -> None:
    """Raise NoIngestIndex when an Elasticsearch prefix or an SQLite file holds no ingest index (a reader's empty
    answer must not look like "no hits"). Called when a read found nothing, so the happy path
    costs no request. Credentials that may not look (403) are left to the read that follows."""
    from ingest.store.elasticsearch import ElasticsearchStore

    if not isinstance(store, ElasticsearchStore):
        # An SQLite file that no run ever wrote to (e.g. made by opening a store that did not
        # exist yet) has no run metadata: its empty answer is "no index here", not "no hits".
        if not store.get_meta():
            raise NoIngestIndex(f"no ingest index in {store.name} yet (wrong --store? run `ingest run` first)")
        return
    from elasticsearch import AuthorizationException, NotFoundError

    targets = ([store.role_alias(role)] if role else []) + [store.all_alias]
    for target in targets:
        try:
            store.es.options(request_timeout=10).search(index=target, size=0, track_total_hits=False)
            return
        except NotFoundError:
            continue
        except AuthorizationException:
            return  # exists or not, these credentials may not see it; the read itself says 403
        except Exception:  # noqa: BLE001 - connection trouble is the read's to report
            return
    raise NoIngestIndex(
        f"no ingest index at prefix {store.prefix!r} on {store.name} "
        "(wrong --index-prefix or store? run `ingest run` first)"
    )
