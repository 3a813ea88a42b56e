"""LangChain: loaders -> RecursiveCharacterTextSplitter -> `index()` into ElasticsearchStore (BM25Strategy).

Loaders (the lightweight ones LangChain documents per format): TextLoader for Markdown and text,
BSHTMLLoader (beautifulsoup4 + lxml) for HTML, PyPDFLoader (pypdf, one Document per page) for PDF.
Incremental: a SQLRecordManager (SQLite file in --state) with cleanup="incremental" and
source_id_key="source", so an unchanged re-run skips what it recorded; LangChain still loads and
splits every file to hash the chunks.
"""

from __future__ import annotations

import time

from _common import CHUNK_CHARS, SUFFIXES, arguments, corpus_files, failed_loads, report


def main() -> None:
    args = arguments()
    started = time.perf_counter()
    from langchain_community.document_loaders import BSHTMLLoader, PyPDFLoader, TextLoader
    from langchain_elasticsearch import BM25Strategy, ElasticsearchStore
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    try:
        from langchain.indexes import SQLRecordManager, index
    except ImportError:  # langchain >= 1.0 moved the indexing API
        from langchain_classic.indexes import SQLRecordManager, index  # type: ignore[no-redef]

    # A client of our own: given es_url, LangChain calls `GET /` first, which the local test node lacks.
    from elasticsearch import Elasticsearch

    store = ElasticsearchStore(
        index_name=args.index, client=Elasticsearch(args.url, request_timeout=120), strategy=BM25Strategy()
    )
    records = SQLRecordManager(f"elasticsearch/{args.index}", db_url=f"sqlite:///{args.state / 'records.sqlite'}")
    records.create_schema()
    splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK_CHARS, chunk_overlap=0)
    errors: list[str] = []

    def documents():
        for path in corpus_files(args.corpus):
            fmt = SUFFIXES[path.suffix.lower()]
            if fmt == "pdf":
                loader = PyPDFLoader(str(path))
            elif fmt == "html":
                loader = BSHTMLLoader(str(path), open_encoding="utf-8")
            else:
                loader = TextLoader(str(path), encoding="utf-8")
            try:
                docs = loader.load()
            except Exception as exc:  # noqa: BLE001 - count it, go on like the others
                errors.append(f"{path.name}: {exc}"[:200])
                continue
            for doc in splitter.split_documents(docs):
                if fmt == "pdf":
                    # PyPDFLoader copies the PDF's info dictionary; Elasticsearch's dynamic mapping makes
                    # `creationdate` a date from the first file and then refuses "Feb. 2003" (TeX Live):
                    # keep what a user would keep instead of mapping every info field by hand.
                    doc.metadata = {k: v for k, v in doc.metadata.items() if k in ("page", "total_pages", "title")}
                doc.metadata["source"] = str(path)
                yield doc

    result = index(documents(), records, store, cleanup="incremental", source_id_key="source", batch_size=500)
    store.client.indices.refresh(index=args.index)
    report("langchain", started, **result, **failed_loads(errors))


if __name__ == "__main__":
    main()
