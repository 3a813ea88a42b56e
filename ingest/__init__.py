"""ingest: parse, validate, chunk and index company documents for RAG on Elasticsearch."""

__version__ = "0.1.0"
