"""The corpus scan: every file under ``CORPUS/documents/``, parsed and validated in one pass.

Each file is read once (its bytes give both the SHA-256 and the parse); a file whose bytes, path,
inventory and settings are the ones the last run recorded (a ``ScanMemo``) is only hashed. A file that
cannot be read or resolved is rejected with every reason; the others go on. Checks between documents
(duplicates, overlapping versions, dangling ``superseded_by``) run last, over those that passed their own.
One file's check (read, parse, metadata, limits) is :mod:`ingest.file_check`; here, the scan over
every file: the listing, the memo, the parser processes and the checks between documents.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable, Collection, Generator, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ingest.file_check import Accepted as Accepted
from ingest.file_check import Rejected as Rejected
from ingest.file_check import Scanned as Scanned
from ingest.file_check import check_file, died_on, listed_format, refused_mark
from ingest.folder_ahead import FolderAhead as FolderAhead
from ingest.inventory_file import (
    bad_inventory,
    entries_for_files,
    entries_naming_no_file,
    inventory_bytes,
    inventory_visibility,
    parse_inventory,
)
from ingest.listing import DOCUMENTS as DOCUMENTS
from ingest.listing import CorpusError as CorpusError
from ingest.listing import Listing as Listing
from ingest.listing import discover as discover
from ingest.listing import list_documents as list_documents
from ingest.listing import read_document as read_document
from ingest.listing import shown as shown
from ingest.metadata import INVENTORY, RULES_VERSION, Visibility, visibility_of
from ingest.metadata_cross import cross_document_problems
from ingest.model import (
    FORMATS,
    DocumentMeta,
    DocumentProblems,
    ScannedDocument,
    UnparsedDocument,
    UnreadableFile,
    made,
)
from ingest.parse import PARSER_VERSION, format_of, load_parsers
from ingest.settings import ChunkSettings, Settings
from ingest.workers import WorkerPool, default_memory_limit, die_with, limit_memory, results_in_order


@dataclass(frozen=True)
class CorpusScan:
    root: Path
    documents: tuple[ScannedDocument, ...]  # valid ones, sorted by source
    rejected: tuple[DocumentProblems, ...]  # sorted by source
    formats: Mapping[str, int]  # files seen per format, every format listed
    defaulted_access: int  # valid documents whose access came from settings.access_default
    # [access] labels of the settings scanned with: a stored version under another label is never kept
    labels: tuple[str, ...]
    inventory_problems: tuple[str, ...] = ()  # inventory.yaml itself: malformed, or names missing files
    folder_problems: tuple[DocumentProblems, ...] = ()  # folders that could not be listed
    fingerprint: str = ""  # inventory bytes + settings + parser version (see ScanMemo)
    listing: str = ""  # hash of the listed paths
    defaulted_sources: tuple[str, ...] = ()  # valid documents whose access came from the default
    rejected_files: tuple[Rejected, ...] = ()  # files rejected on their own, with the bytes' sha256
    # every rejected file read to the end: source -> (sha256, the access, dates and status it declares)
    rejected_visibility: Mapping[str, tuple[str, Visibility | None]] = field(default_factory=dict)
    # valid on their own, rejected between documents (e.g. two files declaring one version): source -> doc_id@version
    rejected_keys: Mapping[str, str] = field(default_factory=dict)

    @property
    def remembered_rejections(self) -> tuple[Rejected, ...]:
        """The rejected files the scan memo may vouch for: the same bytes get the same problems next
        time. A time limit or memory cap that stopped the parser says nothing about the file."""
        return tuple(r for r in self.rejected_files if not r.transient)

    @property
    def unreadable_folders(self) -> tuple[str, ...]:
        """Folders (relative to the root) whose stored documents must be kept: they could not be read."""
        return tuple(p.source for p in self.folder_problems)

    @property
    def seen(self) -> int:
        """Inputs seen under documents/: every file listed, and each folder that could not be listed (one
        input, its files unknown), so that seen = valid + rejected as every report counts them."""
        return sum(self.formats.values()) + len(self.folder_problems)

    @property
    def ok(self) -> bool:
        """No rejected document and no inventory problem (exit 0 rather than 1)."""
        return not self.rejected and not self.inventory_problems and not self.folder_problems

    @property
    def problems(self) -> tuple[DocumentProblems, ...]:
        """Every problem record, inventory.yaml's and unreadable folders' included, sorted by source."""
        records = list(self.rejected) + list(self.folder_problems)
        if self.inventory_problems:
            records.append(DocumentProblems(INVENTORY, None, self.inventory_problems))
        return tuple(sorted(records, key=lambda record: record.source))

    def access_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for document in self.documents:
            counts[document.meta.access] = counts.get(document.meta.access, 0) + 1
        return dict(sorted(counts.items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "documents": self.seen,
            "valid": len(self.documents),
            "rejected": len(self.rejected) + len(self.folder_problems),  # an unreadable folder counts once
            "problems": [record.to_json() for record in self.problems],
            "formats": dict(self.formats),
            "access": self.access_counts(),
            "defaulted_access": self.defaulted_access,
        }


PARALLEL_MIN_FILES = 64  # below this, starting worker processes costs more than it saves


GROUP_FILES = 8  # files per task sent to a worker


WINDOW_PER_WORKER = 2  # tasks in flight per worker: one parsing, one waiting (a first build holds what is in flight)


WORKERS_MAX = 8


PARSER_TIMEOUT_S = 600.0  # per file in a parser process; the largest real PDFs take seconds


def default_workers() -> int:
    """One parser process per core, at most WORKERS_MAX."""
    return min(os.cpu_count() or 1, WORKERS_MAX)


@dataclass(frozen=True)
class ScanMemo:
    """What the last run recorded, so that an unchanged file is hashed but not read for metadata.

    A file is reused when its (source, sha256) is stored, the inventory bytes, settings and
    parser version (``fingerprint``) are those of the last run, and it was no problem then.
    The inventory is not even parsed when every file is reused and the listing is the same.
    """

    fingerprint: str
    listing: str
    known: Mapping[tuple[str, str], DocumentMeta]  # (source, sha256) -> the metadata stored for them
    defaulted: frozenset[str] = frozenset()
    problem_sources: frozenset[str] = frozenset()
    rejected: Mapping[tuple[str, str], Rejected] = field(default_factory=dict)  # (source, sha256): same problems


def _check_files(
    paths: list[Path],
    root: Path,
    inventory: Mapping[str, Mapping[str, Any]],
    settings: Settings,
    skip_body: Collection[str],
    workers: int,
    chunking: ChunkSettings | None = None,
    memory_limit: int | None = None,
    timeout_s: float | None = None,
) -> Generator[Scanned, None, None]:
    """Every file's result, in the order of ``paths``; parsed in worker processes when it pays.

    Parsing is a pure function of the bytes, so it spreads over cores without changing a
    result. Workers are spawned (not forked: the caller may hold threads and locks).
    """
    # Files whose bytes are already stored only have their metadata read: cheap, not worth a worker.
    # PDFs go to a worker even in a small run: pdfium is native code, and a hostile PDF that crashes it
    # or exhausts memory must cost that file only, not the run.
    heavy = len(paths) - len(skip_body)
    has_pdf = any(path.suffix.lower() == ".pdf" for path in paths)
    if not has_pdf and (workers < 2 or heavy < PARALLEL_MIN_FILES):
        for path in paths:
            yield check_file(path, root, inventory, settings, skip_body, chunking)
        return
    processes = max(workers, 1) if heavy >= PARALLEL_MIN_FILES else 1
    if memory_limit is None:
        memory_limit = default_memory_limit(processes)
    pool = WorkerPool(
        task=_check_group,
        on_death=functools.partial(died_on, root, inventory),
        workers=processes,
        group=GROUP_FILES,
        # A bounded window of files in flight: parsed documents never pile up ahead of the caller
        # (which chunks and writes them as they arrive), so memory does not grow with the corpus.
        window_per_worker=WINDOW_PER_WORKER,
        initializer=_init_worker,
        initargs=(
            root,
            dict(inventory),
            settings,
            frozenset(skip_body),
            chunking,
            os.getpid(),
            memory_limit,
            frozenset(filter(None, (format_of(path.name) for path in paths))),
        ),
        item_timeout_s=timeout_s,
    )
    yield from results_in_order(pool, paths)


_worker_args: tuple[Path, Mapping[str, Mapping[str, Any]], Settings, frozenset[str], ChunkSettings | None] | None = None


def _init_worker(
    root: Path,
    inventory: Mapping[str, Mapping[str, Any]],
    settings: Settings,
    skip_body: frozenset[str],
    chunking: ChunkSettings | None,
    parent: int,
    memory_limit: int | None,
    formats: frozenset[str] = frozenset(),
) -> None:
    global _worker_args
    _worker_args = (root, inventory, settings, skip_body, chunking)
    die_with(parent)
    # What every file needs is loaded before the cap: the cap is for the file, and a module left half
    # imported by a MemoryError would fail every later file of this worker (or, seen once under a 30 MB
    # cap, spin inside the import until the file's time limit): chunking, and the parsers of the formats
    # this run has files of.
    import ingest.chunk  # noqa: F401

    load_parsers(formats)

    limit_memory(memory_limit)


def _check_group(paths: list[Path]) -> list[Scanned]:
    assert _worker_args is not None, "worker not initialised"
    root, inventory, settings, skip_body, chunking = _worker_args
    return [check_file(path, root, inventory, settings, skip_body, chunking) for path in paths]


def scan_fingerprint(inventory: bytes | None, settings: Settings) -> str:
    """What decides a file's metadata besides its own bytes and path: inventory, settings, parser,
    and the metadata rules (a release that changes what is valid re-checks what the memo vouched for)."""
    digest = hashlib.sha256(b"inventory:" + (inventory if inventory is not None else b"<none>"))
    digest.update(f"|settings:{settings!r}|parser:{PARSER_VERSION}|rules:{RULES_VERSION}".encode())
    return digest.hexdigest()


def listing_hash(listing: Listing) -> str:
    names = listing.sources + [p.source for p in listing.file_problems]
    return hashlib.sha256("\n".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def _reuse(listing: Listing, memo: ScanMemo, hashed: Mapping[str, str]) -> tuple[dict[str, Scanned], list[Path]]:
    """Hash every file (``hashed``: those already hashed, by source); those the memo knows are
    accepted as stored (or rejected as last time, for the same reasons), the others still to check."""
    reused: dict[str, Scanned] = {}
    todo: list[Path] = []
    for source, path in zip(listing.sources, listing.paths, strict=True):
        try:
            sha256 = hashed.get(source) or hashlib.sha256(read_document(path)).hexdigest()
        except (OSError, UnreadableFile):
            todo.append(path)  # checked again below, which names the problem
            continue
        rejected = memo.rejected.get((source, sha256))
        if rejected is not None:
            reused[source] = rejected
            continue
        meta = memo.known.get((source, sha256))
        if meta is None or source in memo.problem_sources:
            todo.append(path)
            continue
        document = made(
            UnparsedDocument, {"source": source, "sha256": sha256, "meta": meta, "format": listed_format(source)}
        )
        fields = {"source": source, "document": document, "defaulted": source in memo.defaulted, "chunks": None}
        reused[source] = made(Accepted, fields)
    return reused, todo


class MemoMiss(Exception):
    """A file the last run's memo does not vouch for (``scan_corpus(memo_only=True)``)."""


def scan_corpus(
    root: Path,
    settings: Settings,
    on_file: Callable[[str], None] | None = None,
    skip_body: Collection[str] = frozenset(),
    *,
    workers: int | None = None,
    memo: ScanMemo | None = None,
    on_accepted: Callable[[Accepted], Accepted] | None = None,
    ahead: FolderAhead | None = None,
    parser_memory_limit: int | None = None,
    parser_timeout_s: float | None = PARSER_TIMEOUT_S,
    chunking: ChunkSettings | None = None,
    memo_only: bool = False,
) -> CorpusScan:
    """Parse and validate every document of the corpus at ``root``; writes nothing.

    ``on_file(source)``: each file as its result arrives. ``skip_body``: SHA-256s a store holds (only
    their metadata is read); ``memo``: the last run's record (those files are only hashed, or taken from
    ``ahead``, a listing read in a thread). ``on_accepted`` gets each file that passed its own checks and
    returns what the scan keeps of it. Parser processes: ``workers`` (None: one per core, at most 8),
    ``parser_memory_limit`` bytes each (None: a share of memory; 0: none), ``parser_timeout_s`` per file;
    a file whose parser dies or times out is rejected, the others go on. ``chunking``: chunk in the
    workers (``Accepted.chunks``, no parse sent back). ``memo_only``: raise MemoMiss, reading no
    file's body, when the memo does not vouch for every file (the no-op check of an unchanged run).
    """
    root = Path(root)
    if not (root / DOCUMENTS).is_dir():
        raise CorpusError(f"{root}: no {DOCUMENTS}/ folder; a corpus holds its files under {root / DOCUMENTS}")
    inventory_data, inventory_problems = inventory_bytes(root)
    if inventory_problems:
        raise bad_inventory(inventory_problems)
    fingerprint = scan_fingerprint(inventory_data, settings)
    listing, reused, todo = _listed(root, ahead, memo, fingerprint)
    if memo_only and (todo or memo is None or memo.fingerprint != fingerprint):
        raise MemoMiss(f"{len(todo)} file(s) to read")
    listed = listing_hash(listing)
    inventory_skipped = _inventory_still_holds(memo, fingerprint, listed, todo)
    inventory, as_given = _inventory_entries(root, inventory_data, listing, inventory_skipped)
    count = default_workers() if workers is None else workers
    checked = _check_files(
        todo, root, inventory, settings, skip_body, count, chunking, parser_memory_limit, parser_timeout_s
    )
    try:
        results = _in_order(listing.sources, reused, checked, on_file, on_accepted)
    finally:
        # A caller's error (e.g. a store failure raised by on_accepted) leaves the workers' generator
        # suspended: close it now, shutting its pool down, not at interpreter exit (which fails loudly).
        checked.close()
    if not inventory_skipped:
        inventory_problems += entries_naming_no_file(root, as_given, listing)
    scan = _assemble(root, results, listing, inventory_problems, fingerprint, listed, settings.labels)
    unread = inventory_visibility(listing, inventory)
    return replace(scan, rejected_visibility={**unread, **scan.rejected_visibility}) if unread else scan


def _listed(
    root: Path, ahead: FolderAhead | None, memo: ScanMemo | None, fingerprint: str
) -> tuple[Listing, dict[str, Scanned], list[Path]]:
    """The folder's listing, the files the memo vouches for (by their hashes) and the files to read."""
    found = ahead.take() if ahead is not None else None
    # The head start's hashes serve only the reuse here: not held through the scan.
    listing, hashed = found if found is not None else (list_documents(root), {})
    if memo is not None and memo.fingerprint == fingerprint:
        reused, todo = _reuse(listing, memo, hashed)
        return listing, reused, todo
    return listing, {}, listing.paths


def _inventory_entries(
    root: Path, data: bytes | None, listing: Listing, skipped: bool
) -> tuple[Mapping[str, Mapping[str, Any]], Mapping[str, Mapping[str, Any]]]:
    """inventory.yaml's entries by listed file, and as given (to name the keys that name no file);
    none when the last run's inventory checks still hold (``skipped``). A malformed one is refused."""
    if skipped:
        return {}, {}
    as_given, problems = parse_inventory(data)
    if problems:
        raise bad_inventory(problems)
    return entries_for_files(root, as_given, listing), as_given


def _inventory_still_holds(memo: ScanMemo | None, fingerprint: str, listed: str, todo: list[Path]) -> bool:
    """Unchanged inventory, settings, listing and files: the last run's inventory checks still hold."""
    return not (
        todo
        or memo is None
        or memo.fingerprint != fingerprint
        or memo.listing != listed
        or INVENTORY in memo.problem_sources
    )


def _in_order(
    sources: list[str],
    reused: Mapping[str, Scanned],
    checked: Iterator[Scanned],
    on_file: Callable[[str], None] | None,
    on_accepted: Callable[[Accepted], Accepted] | None = None,
) -> list[Scanned]:
    """Every file's result in the order of ``sources``: reused ones, and checked ones as they arrive."""
    results: list[Scanned] = []
    for source in sources:
        result = reused.get(source) or next(checked)
        if on_file is not None:
            on_file(result.source)
        if on_accepted is not None and isinstance(result, Accepted):
            result = on_accepted(result)
        results.append(result)
    return results


def _assemble(
    root: Path,
    results: list[Scanned],
    listing: Listing,
    inventory_problems: list[str],
    fingerprint: str,
    listed: str,
    labels: tuple[str, ...],
) -> CorpusScan:
    """The scan from every file's result: checks between documents last."""
    formats = {name: 0 for name in FORMATS}
    for result in results:
        formats[listed_format(result.source)] += 1
    for problem in listing.file_problems:  # seen, and rejected
        formats[listed_format(problem.source)] += 1
    passed = [result for result in results if isinstance(result, Accepted)]
    rejected_keys = {result.key for result in results if isinstance(result, Rejected) and result.key}
    cross = cross_document_problems([(result.source, result.document.meta) for result in passed], rejected_keys)
    documents = []
    rejected = [result.problems for result in results if isinstance(result, Rejected)] + listing.file_problems
    defaulted: list[str] = []
    keys: dict[str, str] = {}
    visibility = {
        r.source: (refused_mark(r.sha256) if r.refused_by_reader else r.sha256, r.visibility)
        for r in results
        if isinstance(r, Rejected) and (r.sha256 or r.visibility is not None)
    }
    for result in passed:
        if result.source in cross:
            rejected.append(DocumentProblems(result.source, result.document.meta.doc_id, tuple(cross[result.source])))
            visibility[result.source] = (result.document.sha256, visibility_of(result.document.meta))
            keys[result.source] = result.document.meta.key
        else:
            documents.append(result.document)
            if result.defaulted:
                defaulted.append(result.source)
    return CorpusScan(
        root=root,
        documents=tuple(sorted(documents, key=lambda document: document.source)),
        rejected=tuple(sorted(rejected, key=lambda record: record.source)),
        formats=formats,
        defaulted_access=len(defaulted),
        labels=labels,
        inventory_problems=tuple(inventory_problems),
        folder_problems=tuple(listing.folder_problems),
        fingerprint=fingerprint,
        listing=listed,
        defaulted_sources=tuple(sorted(defaulted)),
        rejected_files=tuple(r for r in results if isinstance(r, Rejected) and r.sha256),
        rejected_visibility=visibility,
        rejected_keys=keys,
    )
