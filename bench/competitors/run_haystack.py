"""Haystack 2: FileTypeRouter -> converters -> DocumentCleaner-free DocumentSplitter -> DocumentWriter.

Converters (Haystack's own per format): MarkdownToDocument (markdown-it-py + mdit_plain),
HTMLToDocument (trafilatura), TextFileToDocument, PyPDFToDocument (pypdf). DocumentSplitter by
words, 200 words, no overlap (ingest's default size). ElasticsearchDocumentStore (BM25 via
ElasticsearchBM25Retriever; no embeddings written). Re-runs: DocumentWriter with DuplicatePolicy.SKIP
(document ids are content hashes), so Haystack converts and splits every file again and skips the
writes; it has no record of what a folder held, so nothing is cleaned up.
"""

from __future__ import annotations

import time

from _common import CHUNK_WORDS, SUFFIXES, arguments, corpus_files, failed_loads, report


def main() -> None:
    args = arguments()
    started = time.perf_counter()
    from haystack import Pipeline
    from haystack.components.converters import HTMLToDocument, MarkdownToDocument, PyPDFToDocument, TextFileToDocument
    from haystack.components.joiners import DocumentJoiner
    from haystack.components.preprocessors import DocumentSplitter
    from haystack.components.writers import DocumentWriter
    from haystack.document_stores.types import DuplicatePolicy
    from haystack_integrations.document_stores.elasticsearch import ElasticsearchDocumentStore

    store = ElasticsearchDocumentStore(hosts=args.url, index=args.index)
    # What the store's lazy initialisation does, minus its `GET /` connection check, which the local
    # test node lacks (the integ-test distribution has no main action): one cheap request either way.
    from elasticsearch import Elasticsearch

    client = Elasticsearch(args.url, request_timeout=120)
    if not client.indices.exists(index=args.index):
        client.indices.create(index=args.index, mappings=store._default_mappings)
    store._client = client
    by_format = {"markdown": [], "html": [], "text": [], "pdf": []}
    for path in corpus_files(args.corpus):
        by_format[SUFFIXES[path.suffix.lower()]].append(path)

    pipe = Pipeline()
    pipe.add_component("markdown", MarkdownToDocument())
    pipe.add_component("html", HTMLToDocument())
    pipe.add_component("text", TextFileToDocument())
    pipe.add_component("pdf", PyPDFToDocument())
    pipe.add_component("join", DocumentJoiner())
    pipe.add_component("split", DocumentSplitter(split_by="word", split_length=CHUNK_WORDS, split_overlap=0))
    pipe.add_component("write", DocumentWriter(document_store=store, policy=DuplicatePolicy.SKIP))
    for fmt in by_format:
        pipe.connect(f"{fmt}.documents", "join.documents")
    pipe.connect("join.documents", "split.documents")
    pipe.connect("split.documents", "write.documents")

    # In batches of files, as a user would for a folder that does not fit in one call.
    written = converted = 0
    batch = 200
    formats = [(fmt, p) for fmt, paths in by_format.items() for p in paths]
    for start in range(0, len(formats), batch):
        part = formats[start : start + batch]
        inputs = {fmt: {"sources": [p for f, p in part if f == fmt]} for fmt in by_format}
        result = pipe.run(inputs)
        written += result["write"]["documents_written"]
        converted += len(part)
    store.client.indices.refresh(index=args.index)
    report("haystack", started, files=converted, documents_written=written, **failed_loads([]))


if __name__ == "__main__":
    main()
