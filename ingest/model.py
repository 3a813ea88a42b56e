"""The records that flow through ingest: parsed documents, validated metadata, chunks.

Everything here is a frozen value. Parsing, validation and chunking are pure functions
from one of these to another; only the stores and the pipeline touch the outside world.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields
from datetime import date
from typing import Any, TypeAlias, TypeVar

FORMATS = ("markdown", "html", "text", "pdf")


@dataclass(frozen=True)
class Block:
    """One structural block of a parsed document.

    ``text[start:end]`` of the owning document is exactly this block's text.
    ``heading_path`` is the chain of headings the block lies under; for a heading
    block it ends with the heading itself. ``pages`` lists every PDF page the
    block's characters lie on, first to last (empty for other formats).
    """

    kind: str  # heading, paragraph, list, table or code
    start: int
    end: int
    level: int = 0  # heading level 1-6; 0 for non-headings
    heading_path: tuple[str, ...] = ()
    pages: tuple[int, ...] = ()

    @property
    def section(self) -> str:
        return self.heading_path[-1] if self.heading_path else ""


@dataclass(frozen=True)
class ParsedDocument:
    """The one parsed form shared by every format.

    ``metadata`` holds the raw fields found in the file itself (front matter,
    HTML ``<meta>``, PDF document information), not yet validated.
    ``page_starts`` (PDF only) gives the offset in ``text`` at which each page
    begins, page 1 first, so the pages of any span can be computed.
    """

    format: str
    text: str
    blocks: tuple[Block, ...]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    page_starts: tuple[int, ...] = ()

    def pages_of(self, start: int, end: int) -> tuple[int, ...]:
        """Every page the characters ``text[start:end]`` lie on, first to last."""
        if not self.page_starts:
            return ()
        # page_starts is non-decreasing: the last page starting at or before ``start`` is
        # the first page, the last page starting before ``end`` the last one.
        first = max(bisect_right(self.page_starts, start), 1)
        last = max(bisect_left(self.page_starts, max(end, start + 1)), 1)
        return tuple(range(first, max(first, last) + 1))


_Frozen = TypeVar("_Frozen")


def made(cls: type[_Frozen], values: dict[str, Any]) -> _Frozen:
    """``cls(**values)`` for a frozen dataclass given every one of its fields (defaults are not filled in),
    without its ``__init__``: that sets each field through ``object.__setattr__``, and a run with nothing
    to do makes a few objects per file from its memo and records (their cost was a tenth of such a run)."""
    made_one: _Frozen = object.__new__(cls)
    made_one.__dict__.update(values)
    return made_one


class UnreadableFile(Exception):
    """A file that cannot be parsed: empty, binary, not UTF-8, not a PDF, encrypted, no text."""


class FileTooLarge(UnreadableFile):
    """A file over the size limit: never read, and never the bytes of a stored version (those were read)."""


@dataclass(frozen=True, order=True)
class DocKey:
    """One document version: ``doc_id@version`` in records, messages and the stores' record IDs.

    Neither part can contain ``@`` (metadata validation: doc_id is a slug, version excludes it)."""

    doc_id: str
    version: str

    def __str__(self) -> str:
        return f"{self.doc_id}@{self.version}"

    @classmethod
    def parse(cls, key: DocKey | str) -> DocKey:
        """``doc_id@version`` (or a DocKey) as a DocKey; ValueError when there is no ``@``."""
        if isinstance(key, DocKey):
            return key
        doc_id, at, version = key.rpartition("@")
        if not at:
            raise ValueError(f"{key!r} is not a document key (doc_id@version)")
        return cls(doc_id, version)


class _VersionKeyed:
    """``doc_key`` and ``key`` (doc_id@version) of what describes one document version."""

    doc_id: str
    version: str

    @property
    def doc_key(self) -> DocKey:
        return DocKey(self.doc_id, self.version)

    @property
    def key(self) -> str:
        return f"{self.doc_id}@{self.version}"  # str(self.doc_key), without making a DocKey (plans ask per document)


@dataclass(frozen=True)
class DocumentMeta(_VersionKeyed):
    """Validated metadata of one document version."""

    doc_id: str
    version: str
    title: str
    access: str
    effective_from: date | None = None
    effective_to: date | None = None
    status: str = "current"
    superseded_by: str | None = None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class SourceDocument:
    """A document that passed validation, with its parsed body: what a chunker receives."""

    source: str  # path relative to the corpus root, with forward slashes
    sha256: str
    parsed: ParsedDocument
    meta: DocumentMeta
    format: str = ""

    def without_body(self) -> UnparsedDocument:
        """The same document, its parsed body dropped (its chunks are already made)."""
        return UnparsedDocument(self.source, self.sha256, self.meta, self.format)


@dataclass(frozen=True)
class UnparsedDocument:
    """A document that passed validation without its body being kept: its bytes are already
    stored (a sync's fast path reads only their metadata) or were chunked and written as the
    scan read them. ``plan.parsed_document`` parses it again when it must be chunked."""

    source: str  # path relative to the corpus root, with forward slashes
    sha256: str
    meta: DocumentMeta
    format: str = ""


# What a corpus scan accepts: a document with its parsed body, or its metadata only.
ScannedDocument: TypeAlias = SourceDocument | UnparsedDocument


@dataclass(frozen=True)
class DocumentProblems:
    """Every problem found for one file (or one doc_id shared by several files)."""

    source: str
    doc_id: str | None
    problems: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "doc_id": self.doc_id, "problems": list(self.problems)}


def chunk_id(doc_id: str, version: str, start: int, end: int) -> str:
    """The stable ID of a chunk: 20 hex chars of SHA-256 of ``doc_id|version|start|end``."""
    return hashlib.sha256(f"{doc_id}|{version}|{start}|{end}".encode()).hexdigest()[:20]


SHORT_ID = 12
MIN_PREFIX = 8
CHUNK_ID_LENGTH = 20


def chunk_id_prefix(text: str) -> str | None:
    """``text`` as a chunk-ID lookup (lowercase), or None when it is not a chunk ID or a prefix of
    MIN_PREFIX or more hex characters: the one rule for every store and the CLI."""
    wanted = text.strip().lower()
    if MIN_PREFIX <= len(wanted) <= CHUNK_ID_LENGTH and all(ch in "0123456789abcdef" for ch in wanted):
        return wanted
    return None


def json_fields(record: Any, *, rename: Mapping[str, str] | None = None, skip: Collection[str] = ()) -> dict[str, Any]:
    """A record's dataclass fields as JSON, in the order declared: tuples as lists, nested records
    as their own ``to_json()``; ``rename`` gives a field another JSON key, ``skip`` leaves it out."""
    names = rename or {}
    return {
        names.get(f.name, f.name): _json_value(getattr(record, f.name)) for f in fields(record) if f.name not in skip
    }


def _json_value(value: Any) -> Any:
    if hasattr(value, "to_json"):
        return value.to_json()
    if isinstance(value, (tuple, list)):
        return [_json_value(item) for item in value]
    return value


def _shared_from_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields chunks and records both carry, from JSON: the document version, its title, and
    who may read it and when (a missing status is "current")."""
    return {
        "doc_id": data["doc_id"],
        "version": data["version"],
        "title": data["title"],
        "access": data["access"],
        "effective_from": data.get("effective_from"),
        "effective_to": data.get("effective_to"),
        "status": data.get("status") or "current",
        "superseded_by": data.get("superseded_by"),
        "tags": tuple(data.get("tags") or ()),
    }


@dataclass(frozen=True)
class Chunk:
    """One citable chunk, exactly the record stored in every store."""

    chunk_id: str
    doc_id: str
    version: str
    title: str
    section: str
    sections: tuple[str, ...]
    heading_path: tuple[str, ...]
    position: int
    start: int
    end: int
    pages: tuple[int, ...]
    text: str
    word_count: int
    access: str
    effective_from: str | None
    effective_to: str | None
    status: str
    superseded_by: str | None
    tags: tuple[str, ...]
    source: str
    source_sha256: str
    chunker: str

    @property
    def short_id(self) -> str:
        return self.chunk_id[:SHORT_ID]

    @property
    def doc_key(self) -> DocKey:
        """The document version this chunk belongs to."""
        return DocKey(self.doc_id, self.version)

    def to_json(self) -> dict[str, Any]:
        # What json_fields(self) gives (a test holds them equal, key order included), written out:
        # it runs for every chunk written, and the generic walk costs several times as much.
        return {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "version": self.version,
            "title": self.title,
            "section": self.section,
            "sections": list(self.sections),
            "heading_path": list(self.heading_path),
            "position": self.position,
            "start": self.start,
            "end": self.end,
            "pages": list(self.pages),
            "text": self.text,
            "word_count": self.word_count,
            "access": self.access,
            "effective_from": self.effective_from,
            "effective_to": self.effective_to,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "tags": list(self.tags),
            "source": self.source,
            "source_sha256": self.source_sha256,
            "chunker": self.chunker,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Chunk:
        return cls(
            chunk_id=data["chunk_id"],
            **_shared_from_json(data),
            section=data["section"],
            sections=tuple(data.get("sections") or ()),
            heading_path=tuple(data.get("heading_path") or ()),
            position=int(data["position"]),
            start=int(data["start"]),
            end=int(data["end"]),
            pages=tuple(int(p) for p in data.get("pages") or ()),
            text=data["text"],
            word_count=int(data["word_count"]),
            source=data["source"],
            source_sha256=data["source_sha256"],
            chunker=data["chunker"],
        )

    def citation(self) -> str:
        """What a person follows back to the source: title, section, version, pages."""
        parts = [f"“{self.title}”"]
        if self.section:
            parts.append(f"section “{self.section}”")
        parts.append(f"version {self.version}")
        if self.pages:
            pages = self.pages
            parts.append(f"page {pages[0]}" if len(pages) == 1 else f"pages {pages[0]}–{pages[-1]}")
        return ", ".join(parts) + f" [{self.short_id}]"


@dataclass(frozen=True)
class Hit:
    chunk: Chunk
    score: float

    def to_json(self) -> dict[str, Any]:
        data = self.chunk.to_json()
        data["score"] = round(self.score, 4)
        return data


@dataclass(frozen=True)
class DocumentRecord(_VersionKeyed):
    """What a store keeps per document version, next to its chunks: the state sync compares against."""

    doc_id: str
    version: str
    title: str
    source: str
    source_sha256: str
    format: str
    access: str
    status: str
    effective_from: str | None
    effective_to: str | None
    superseded_by: str | None
    tags: tuple[str, ...]
    settings_fingerprint: str  # chunker, sizes and parser version that shaped the chunks
    chunk_ids: tuple[str, ...]

    @property
    def chunk_count(self) -> int:
        return len(self.chunk_ids)

    def meta(self) -> DocumentMeta:
        """The document metadata this version was stored with."""
        fields = {
            "doc_id": self.doc_id,
            "version": self.version,
            "title": self.title,
            "access": self.access,
            "effective_from": date.fromisoformat(self.effective_from) if self.effective_from else None,
            "effective_to": date.fromisoformat(self.effective_to) if self.effective_to else None,
            "status": self.status,
            "superseded_by": self.superseded_by,
            "tags": tuple(self.tags),
        }
        return made(DocumentMeta, fields)  # DocumentMeta(**fields), made once per stored record

    def to_json(self) -> dict[str, Any]:
        data = json_fields(self, skip=("chunk_ids",))
        return {**data, "chunk_count": self.chunk_count, "chunk_ids": list(self.chunk_ids)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DocumentRecord:
        return cls(
            **_shared_from_json(data),
            source=data["source"],
            source_sha256=data["source_sha256"],
            format=data["format"],
            settings_fingerprint=data["settings_fingerprint"],
            chunk_ids=tuple(data.get("chunk_ids") or ()),
        )
