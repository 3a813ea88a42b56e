"""ingest: parse, validate, chunk and index company documents for RAG on Elasticsearch.

The documented Python API (see the README, "Python API"):

- :func:`open_store` (url, prefix, …) → :class:`Index` with ``search(query, role=…, as_of=…, top=…)``,
  ``chunks(doc_id)``, ``chunk(id)``, ``stats()``, ``close()`` (also a context manager)
- :func:`run` (corpus, store, …) → :class:`RunResult`
- :func:`labels_for_role`, :class:`UnknownRole`
- records: :class:`Chunk`, :class:`Hit`, :class:`DocumentRecord`, :class:`RunResult`, :class:`ConnectionConfig`
- errors: :class:`StoreError`, :class:`StoreUnavailable`, :class:`ConfigError`

Names are imported on first use, so ``import ingest`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "open_store": "ingest.api",
    "run": "ingest.api",
    "Index": "ingest.api",
    "UnknownRole": "ingest.api",
    "QueryTooLarge": "ingest.api",
    "labels_for_role": "ingest.api",
    "Chunk": "ingest.model",
    "Hit": "ingest.model",
    "DocumentRecord": "ingest.model",
    "RunResult": "ingest.pipeline",
    "ConnectionConfig": "ingest.config",
    "ConfigError": "ingest.config",
    "StoreError": "ingest.store.base",
    "StoreUnavailable": "ingest.store.base",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ingest' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
