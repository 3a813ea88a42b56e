"""One listed file's check, as a parser process runs it: its bytes read within the size limit, parsed
(or, when a store holds those bytes, only its metadata read), its metadata resolved with inventory.yaml
and the settings, the term and heading limits checked, and chunked there when asked. The result is
Accepted, or Rejected with every reason; a parser that fails, dies or runs out of memory rejects this
file only (:func:`died_on`). The scan over every file is :mod:`ingest.corpus`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ingest.listing import DOCUMENTS, read_document
from ingest.metadata import (
    Visibility,
    declared_visibility,
    entry_visibility,
    found_doc_id,
    found_key,
    resolve_metadata,
)
from ingest.model import (
    DocumentProblems,
    FileTooLarge,
    ParsedDocument,
    ScannedDocument,
    SourceDocument,
    UnparsedDocument,
    UnreadableFile,
)
from ingest.parse import SUFFIXES, format_of, parse_bytes, read_metadata
from ingest.settings import ChunkSettings, Settings
from ingest.workers import WORKER_OUT_OF_MEMORY

if TYPE_CHECKING:  # only annotations: chunking is imported where a file is checked
    from ingest.chunk import ChunkLimitExceeded
    from ingest.model import Chunk

# the "sha256" of a file over the size limit, never read: no stored version's (see _checked)
OVER_SIZE_LIMIT = "(over the size limit: not read)"
# stands for the sha256 of a rejected file whose reader refused its metadata (ingest.kept)
REFUSED_BY_READER = "(metadata refused by its reader)"


def refused_mark(sha256: str) -> str:
    """The scan's hash of a file whose reader refused its metadata: marked, the bytes' hash kept, so that
    only unchanged bytes are reported as refused by this release's readers (an edit that broke the
    file says it changed)."""
    return REFUSED_BY_READER + sha256


def refused_bytes(mark: str) -> str | None:
    """The hash of bytes whose reader refused their metadata (None: not so marked)."""
    return mark[len(REFUSED_BY_READER) :] if mark.startswith(REFUSED_BY_READER) else None


@dataclass(frozen=True)
class Accepted:
    """A file whose metadata is valid on its own (cross-document checks come later)."""

    source: str
    document: ScannedDocument
    defaulted: bool = False  # its access came from settings.access_default
    # chunked where it was parsed (``scan_corpus(chunking=…)``; the document then comes without its
    # body): its chunks, or why the chunker refused it; None when not chunked there
    chunks: list[Chunk] | ChunkLimitExceeded | None = None


@dataclass(frozen=True)
class Rejected:
    """A file that cannot be taken, with every reason."""

    source: str
    problems: DocumentProblems
    key: str | None = None  # doc_id@version a rejected file declares
    sha256: str = ""  # of the bytes that were rejected ("" when they could not be read)
    visibility: Visibility | None = None  # access, dates and status it declares; None: unreadable
    # refused by the parser's environment (its time limit, its memory cap, its process dying, an
    # unexpected parser error), not by the file: never remembered in the scan memo, so the next run reads the file again
    transient: bool = False
    # the file was read and its reader refused what it declares (ambiguous, hidden or unreadable
    # metadata): unchanged bytes no longer vouch for a stored version indexed under older rules
    refused_by_reader: bool = False


Scanned: TypeAlias = Accepted | Rejected


def died_on(root: Path, inventory: Mapping[str, Mapping[str, Any]], path: Path, reason: str) -> Scanned:
    """The rejection of a file whose parser died, ran out of memory or ran past its time limit."""
    source = path.relative_to(root).as_posix()
    entry = inventory.get(path.relative_to(root / DOCUMENTS).as_posix())
    sha256 = ""
    with contextlib.suppress(OSError, UnreadableFile):
        sha256 = hashlib.sha256(read_document(path)).hexdigest()
    return replace(rejected_file(source, {}, entry, [f"{source}: unreadable file: {reason}"], sha256), transient=True)


def check_file(
    path: Path,
    root: Path,
    inventory: Mapping[str, Mapping[str, Any]],
    settings: Settings,
    skip_body: Collection[str] = (),
    chunking: ChunkSettings | None = None,
) -> Scanned:
    try:
        return _checked(path, root, inventory, settings, skip_body, chunking)
    except MemoryError:  # the parser's memory cap (INGEST_PARSER_MEMORY_MB): this file's problem, not the run's
        return died_on(root, inventory, path, WORKER_OUT_OF_MEMORY)


def _checked(
    path: Path,
    root: Path,
    inventory: Mapping[str, Mapping[str, Any]],
    settings: Settings,
    skip_body: Collection[str],
    chunking: ChunkSettings | None,
) -> Scanned:
    source = path.relative_to(root).as_posix()
    entry = inventory.get(path.relative_to(root / DOCUMENTS).as_posix())
    try:
        data = read_document(path)
    except OSError as exc:
        problem = f"{source}: unreadable file: {exc.strerror or exc}"
        return rejected_file(source, {}, entry, [problem], visibility=entry_visibility(entry))
    except FileTooLarge as exc:
        # Not the bytes of any stored version (those were read, under the limit): an edit whose access,
        # dates and status cannot be read, so it withdraws the stored version of this path, as a broken
        # front matter does (ingest.kept). A stat-sized marker stands for the hash of bytes never read.
        return rejected_file(source, {}, entry, [f"{source}: unreadable file: {exc}"], OVER_SIZE_LIMIT)
    except UnreadableFile as exc:
        return rejected_file(
            source, {}, entry, [f"{source}: unreadable file: {exc}"], visibility=entry_visibility(entry)
        )
    sha256 = hashlib.sha256(data).hexdigest()
    parsed: ParsedDocument | None = None
    fields: Mapping[str, Any]
    try:
        if sha256 in skip_body:
            fields = read_metadata(data, path.name, settings.labels)
        else:
            parsed = parse_bytes(data, path.name, settings.labels)
            fields = parsed.metadata
    except UnreadableFile as exc:
        refused = rejected_file(source, {}, entry, [f"{source}: unreadable file: {exc}"], sha256)
        return replace(refused, refused_by_reader=True)
    except MemoryError:
        raise  # the parser's memory cap, not the file: rejected as such by _check_file
    except Exception as exc:  # noqa: BLE001 - a parser bug must not stop the other files; reported as such
        problem = f"{source}: unreadable file: parser error: {type(exc).__name__}: {exc}"
        # not remembered: a library failing under the memory cap (a shared object that cannot be mapped)
        # looks the same as a bug, and a bug is fixed by a release; the next run tries the file again
        return replace(rejected_file(source, {}, entry, [problem], sha256), transient=True)
    text_fields = listed_format(path.name) in TEXT_FIELD_FORMATS
    meta, problems, defaulted = resolve_metadata(source, fields, entry, settings, text_fields=text_fields)
    if meta is None:
        declared = declared_visibility(fields, entry, settings.access_default or "")
        return rejected_file(source, fields, entry, problems, sha256, declared)
    if parsed is None:
        return Accepted(source, UnparsedDocument(source, sha256, meta, listed_format(path.name)), defaulted)
    document = SourceDocument(source=source, sha256=sha256, parsed=parsed, meta=meta, format=listed_format(path.name))
    return _chunked(document, fields, entry, settings, defaulted, chunking)


def _chunked(
    document: SourceDocument,
    fields: Mapping[str, Any],
    entry: Mapping[str, Any] | None,
    settings: Settings,
    defaulted: bool,
    chunking: ChunkSettings | None,
) -> Scanned:
    """A valid, parsed file past the term and heading limits; chunked here when ``chunking`` is given."""
    # The term limit does not depend on chunk settings: `validate` refuses what `run` would.
    from ingest.chunk import ChunkLimitExceeded, check_headings, check_terms, chunk_document

    try:
        check_terms(document.parsed.text, document)
        check_headings(document.parsed.blocks)
    except ChunkLimitExceeded as exc:
        declared = declared_visibility(fields, entry, settings.access_default or "")
        return rejected_file(document.source, fields, entry, [f"{document.source}: {exc}"], document.sha256, declared)
    if chunking is not None:
        # Chunked here, in the worker that parsed it: the chunks, not the parse, go back to the
        # run, and chunking runs on every core while the run writes.
        chunks: list[Chunk] | ChunkLimitExceeded
        try:
            chunks = chunk_document(document, chunking, checked=True)  # checked just above
        except ChunkLimitExceeded as exc:
            chunks = exc
        return Accepted(document.source, document.without_body(), defaulted, chunks)
    return Accepted(document.source, document, defaulted)


# Formats whose fields are text (HTML <meta>, PDF information entries): tags there are "a, b";
# Markdown and text give YAML front matter, where tags are a list.
TEXT_FIELD_FORMATS = ("html", "pdf")


def listed_format(name: str) -> str:
    """The format of a listed file (listing keeps only supported suffixes); string work only: the suffix
    as ``os.path.splitext`` finds it, without its Python-level cost (asked twice per file of a no-op run)."""
    dot, start = name.rfind("."), name.rfind(os.sep) + 1
    if os.altsep is None and dot > start and name[start:dot].strip("."):
        found = SUFFIXES.get(name[dot:].lower())
        if found is not None:
            return found
    return SUFFIXES.get(os.path.splitext(name)[1].lower()) or format_of(name) or "text"


def rejected_file(
    source: str,
    fields: Any,
    entry: Mapping[str, Any] | None,
    problems: list[str],
    sha256: str = "",
    visibility: Visibility | None = None,
) -> Rejected:
    record = DocumentProblems(source, found_doc_id(fields, entry), tuple(problems))
    return Rejected(source, record, key=found_key(fields, entry), sha256=sha256, visibility=visibility)
