"""The chunkers, on hand-made parsed documents: exact texts, offsets, IDs and records."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from ingest.chunk import chunk_document
from ingest.model import Block, DocumentMeta, ParsedDocument, SourceDocument, chunk_id
from ingest.settings import ChunkSettings

META = DocumentMeta(
    doc_id="warranty-policy",
    version="5",
    title="Warranty policy",
    access="partner",
    effective_from=date(2026, 1, 1),
    effective_to=None,
    tags=("warranty", "returns"),
)


def parsed(parts: list[tuple[str, str]], page_starts: tuple[int, ...] = (), fmt: str = "markdown") -> ParsedDocument:
    """A parsed document from (kind, text) parts joined by blank lines; kind "h1".."h6" is a heading."""
    text, blocks, path = "", [], []
    for kind, body in parts:
        start = len(text) + (2 if text else 0)
        text = f"{text}\n\n{body}" if text else body
        end = len(text)
        if kind.startswith("h"):
            level = int(kind[1:])
            path = [(lvl, title) for lvl, title in path if lvl < level] + [(level, body)]
            blocks.append(Block("heading", start, end, level, tuple(t for _, t in path)))
        else:
            blocks.append(Block(kind, start, end, 0, tuple(t for _, t in path)))
    doc = ParsedDocument(format=fmt, text=text, blocks=tuple(blocks), page_starts=page_starts)
    if page_starts:
        doc = replace(doc, blocks=tuple(replace(b, pages=doc.pages_of(b.start, b.end)) for b in blocks))
    return doc


def source(doc: ParsedDocument, meta: DocumentMeta = META) -> SourceDocument:
    return SourceDocument(source="documents/warranty.md", sha256="ab" * 32, parsed=doc, meta=meta)


def spans(chunks) -> list[tuple[int, int, str]]:
    return [(c.start, c.end, c.text) for c in chunks]


SMALL = parsed(
    [
        ("h1", "Returns"),
        ("paragraph", "Items may be returned within 30 days. Keep the receipt."),
        ("h2", "Refunds"),
        ("paragraph", "Refunds go to the original card."),
        ("h2", "Exchanges"),
        ("paragraph", "Exchanges are free."),
    ]
)


