"""LlamaIndex: SimpleDirectoryReader -> IngestionPipeline(SentenceSplitter) + docstore -> ElasticsearchStore (BM25).

Loaders: SimpleDirectoryReader with its default file readers — PDFReader (pypdf) for PDF,
MarkdownReader for Markdown — plus HTMLTagReader (beautifulsoup4, tag "body") for HTML, which it does
not map by default; text is read as is. `filename_as_id=True` gives stable document ids.
Splitter: SentenceSplitter, 256 tokens (~200 words), no overlap.
Incremental: a SimpleDocumentStore persisted in --state with the pipeline's default strategy for a
docstore + vector store (DocstoreStrategy.UPSERTS): an unchanged document's hash matches, so it is
neither split nor written again. The pipeline passes the vector store only nodes that have an
embedding, so the runner adds the nodes the pipeline returned itself.
Vector store: ElasticsearchStore with the BM25 retrieval strategy
(no embeddings computed or stored).
"""

from __future__ import annotations

import time

from _common import CHUNK_TOKENS, arguments, corpus_files, failed_loads, report


def main() -> None:
    args = arguments()
    started = time.perf_counter()
    from llama_index.core import SimpleDirectoryReader
    from llama_index.core.ingestion import DocstoreStrategy, IngestionPipeline
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.core.storage.docstore import SimpleDocumentStore
    from llama_index.readers.file import HTMLTagReader
    from llama_index.vector_stores.elasticsearch import ElasticsearchStore

    strategy = None
    try:  # BM25 only, if this version of the integration exposes the elasticsearch helper strategies
        from llama_index.vector_stores.elasticsearch import AsyncBM25Strategy

        strategy = AsyncBM25Strategy()
    except ImportError:
        pass
    kwargs = {"retrieval_strategy": strategy} if strategy is not None else {}
    # A client of our own: given es_url, the integration calls `GET /` first, which the local test node lacks.
    from elasticsearch import AsyncElasticsearch

    store = ElasticsearchStore(
        index_name=args.index, es_client=AsyncElasticsearch(args.url, request_timeout=120), **kwargs
    )

    files = corpus_files(args.corpus)
    reader = SimpleDirectoryReader(
        input_files=[str(p) for p in files],
        filename_as_id=True,
        file_extractor={".html": HTMLTagReader(tag="body"), ".htm": HTMLTagReader(tag="body")},
        raise_on_error=False,
    )
    documents = reader.load_data(show_progress=False)

    persist = args.state / "pipeline"
    pipeline = IngestionPipeline(
        transformations=[SentenceSplitter(chunk_size=CHUNK_TOKENS, chunk_overlap=0)],
        docstore=SimpleDocumentStore(),
        vector_store=store,
        docstore_strategy=DocstoreStrategy.UPSERTS,
    )
    if persist.exists():
        pipeline.load(str(persist))
    nodes = pipeline.run(documents=documents, show_progress=False)
    # The pipeline hands the vector store only nodes with an embedding; BM25 needs none, so the
    # nodes it returned (new or changed documents; it already deleted the changed ones' old nodes) go in here.
    if nodes:
        store.add(nodes)
    pipeline.persist(str(persist))
    report(
        "llamaindex",
        started,
        documents=len(documents),
        nodes_written=len(nodes),
        strategy=type(strategy).__name__ if strategy is not None else "default (dense vectors)",
        **failed_loads([]),
    )


if __name__ == "__main__":
    main()
