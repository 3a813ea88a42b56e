"""The corpus scan: every file under ``CORPUS/documents/``, parsed and validated in one pass.

Each file is read once (its bytes give both the SHA-256 and the parse); a file whose bytes,
path, inventory and settings are the ones the last run recorded (a ``ScanMemo``) is only hashed. A file that
cannot be read or resolved is rejected with every reason; the others go on. Checks
between documents (duplicates, overlapping versions, dangling ``superseded_by``) run
last, over the documents that passed their own checks.
"""

from __future__ import annotations

import functools
import hashlib
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ingest.listing import DOCUMENTS as DOCUMENTS
from ingest.listing import CorpusError as CorpusError
from ingest.listing import Listing as Listing
from ingest.listing import discover as discover
from ingest.listing import list_documents as list_documents
from ingest.listing import read_document as read_document
from ingest.listing import shown as shown
from ingest.metadata import (
    INVENTORY,
    cross_document_problems,
    found_doc_id,
    found_key,
    read_inventory,
    resolve_metadata,
)
from ingest.model import FORMATS, DocumentMeta, DocumentProblems, ParsedDocument, SourceDocument, UnreadableFile
from ingest.parse import PARSER_VERSION, SUFFIXES, format_of, parse_bytes, read_metadata
from ingest.settings import ChunkSettings, Settings

if TYPE_CHECKING:  # only annotations: chunking is imported where a file is checked
    from ingest.chunk import ChunkLimitExceeded
    from ingest.model import Chunk


@dataclass(frozen=True)
class CorpusScan:
    root: Path
    documents: tuple[SourceDocument, ...]  # valid ones, sorted by source
    rejected: tuple[DocumentProblems, ...]  # sorted by source
    formats: Mapping[str, int]  # files seen per format, every format listed
    defaulted_access: int  # valid documents whose access came from settings.access_default
    inventory_problems: tuple[str, ...] = ()  # inventory.yaml itself: malformed, or names missing files
    folder_problems: tuple[DocumentProblems, ...] = ()  # folders that could not be listed
    fingerprint: str = ""  # inventory bytes + settings + parser version (see ScanMemo)
    listing: str = ""  # hash of the listed paths
    defaulted_sources: tuple[str, ...] = ()  # valid documents whose access came from the default
    rejected_files: tuple[Rejected, ...] = ()  # files rejected on their own, with the bytes' sha256

    @property
    def unreadable_folders(self) -> tuple[str, ...]:
        """Folders (relative to the root) whose stored documents must be kept: they could not be read."""
        return tuple(p.source for p in self.folder_problems)

    @property
    def seen(self) -> int:
        return sum(self.formats.values())

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
            "rejected": len(self.rejected),
            "problems": [record.to_json() for record in self.problems],
            "formats": dict(self.formats),
            "access": self.access_counts(),
            "defaulted_access": self.defaulted_access,
        }


PARALLEL_MIN_FILES = 64  # below this, starting worker processes costs more than it saves


GROUP_FILES = 8  # files per task sent to a worker


WINDOW_PER_WORKER = 4  # tasks in flight per worker


WORKERS_MAX = 8


def default_workers() -> int:
    """One parser process per core, at most WORKERS_MAX."""
    return min(os.cpu_count() or 1, WORKERS_MAX)


@dataclass(frozen=True)
class Accepted:
    """A file whose metadata is valid on its own (cross-document checks come later)."""

    source: str
    document: SourceDocument
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


Scanned: TypeAlias = Accepted | Rejected


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
) -> Iterator[Scanned]:
    """Every file's result, in the order of ``paths``; parsed in worker processes when it pays.

    Parsing is a pure function of the bytes, so it spreads over cores without changing a
    result. Workers are spawned (not forked: the caller may hold threads and locks).
    """
    # Files whose bytes are already stored only have their metadata read: cheap, not worth a worker.
    heavy = len(paths) - len(skip_body)
    if workers < 2 or heavy < PARALLEL_MIN_FILES:
        for path in paths:
            yield _check_file(path, root, inventory, settings, skip_body, chunking)
        return
    context = multiprocessing.get_context("spawn")
    init = functools.partial(_init_worker, root, dict(inventory), settings, frozenset(skip_body), chunking, os.getpid())
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=init) as pool:
        # A bounded window of files in flight: parsed documents never pile up ahead of the caller
        # (which chunks and writes them as they arrive), so memory does not grow with the corpus.
        window: deque[Future[list[Scanned]]] = deque()
        groups = (paths[i : i + GROUP_FILES] for i in range(0, len(paths), GROUP_FILES))
        for group in groups:
            window.append(pool.submit(_check_group, group))
            if len(window) >= workers * WINDOW_PER_WORKER:
                yield from window.popleft().result()
        while window:
            yield from window.popleft().result()


_worker_args: tuple[Path, Mapping[str, Mapping[str, Any]], Settings, frozenset[str], ChunkSettings | None] | None = None


def _init_worker(
    root: Path,
    inventory: Mapping[str, Mapping[str, Any]],
    settings: Settings,
    skip_body: frozenset[str],
    chunking: ChunkSettings | None,
    parent: int,
) -> None:
    global _worker_args
    _worker_args = (root, inventory, settings, skip_body, chunking)
    _die_with(parent)


def _die_with(parent: int) -> None:
    """A worker must not outlive the run that started it (a killed `ingest run` would leave
    it blocked forever): on Linux the kernel kills it when the parent dies (PR_SET_PDEATHSIG);
    everywhere, a watcher thread exits it once its parent is gone."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the watcher below is enough
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="ingest-parent-watch", daemon=True).start()


def _check_group(paths: list[Path]) -> list[Scanned]:
    assert _worker_args is not None, "worker not initialised"
    root, inventory, settings, skip_body, chunking = _worker_args
    return [_check_file(path, root, inventory, settings, skip_body, chunking) for path in paths]


def _check_file(
    path: Path,
    root: Path,
    inventory: Mapping[str, Mapping[str, Any]],
    settings: Settings,
    skip_body: Collection[str] = (),
    chunking: ChunkSettings | None = None,
) -> Scanned:
    source = path.relative_to(root).as_posix()
    entry = inventory.get(path.relative_to(root / DOCUMENTS).as_posix())
    try:
        data = read_document(path)
    except OSError as exc:
        return _rejected(source, {}, entry, [f"{source}: unreadable file: {exc.strerror or exc}"])
    except UnreadableFile as exc:
        return _rejected(source, {}, entry, [f"{source}: unreadable file: {exc}"])
    sha256 = hashlib.sha256(data).hexdigest()
    parsed: ParsedDocument | None = None
    fields: Mapping[str, Any]
    try:
        if sha256 in skip_body:
            fields = read_metadata(data, path.name)
        else:
            parsed = parse_bytes(data, path.name)
            fields = parsed.metadata
    except UnreadableFile as exc:
        return _rejected(source, {}, entry, [f"{source}: unreadable file: {exc}"], sha256)
    except Exception as exc:  # noqa: BLE001 - a parser bug must not stop the other files; reported as such
        problem = f"{source}: unreadable file: parser error: {type(exc).__name__}: {exc}"
        return _rejected(source, {}, entry, [problem], sha256)
    meta, problems, defaulted = resolve_metadata(source, fields, entry, settings)
    if meta is None:
        return _rejected(source, fields, entry, problems, sha256)
    document = SourceDocument(source=source, sha256=sha256, parsed=parsed, meta=meta, format=_format(path.name))
    if parsed is not None:
        # The term limit does not depend on chunk settings: `validate` refuses what `run` would.
        from ingest.chunk import ChunkLimitExceeded, check_headings, check_terms, chunk_document

        try:
            check_terms(parsed.text, document)
            check_headings(parsed.blocks)
        except ChunkLimitExceeded as exc:
            return _rejected(source, fields, entry, [f"{source}: {exc}"], sha256)
        if chunking is not None:
            # Chunked here, in the worker that parsed it: the chunks, not the parse, go back to the
            # run, and chunking runs on every core while the run writes.
            chunks: list[Chunk] | ChunkLimitExceeded
            try:
                chunks = chunk_document(document, chunking)
            except ChunkLimitExceeded as exc:
                chunks = exc
            return Accepted(source, replace(document, parsed=None), defaulted, chunks)
    return Accepted(source, document, defaulted)


def _format(name: str) -> str:
    """The format of a listed file (listing keeps only supported suffixes); string work only."""
    return SUFFIXES.get(os.path.splitext(name)[1].lower()) or format_of(name) or "text"


def _rejected(
    source: str, fields: Any, entry: Mapping[str, Any] | None, problems: list[str], sha256: str = ""
) -> Rejected:
    record = DocumentProblems(source, found_doc_id(fields, entry), tuple(problems))
    return Rejected(source, record, key=found_key(fields, entry), sha256=sha256)


def _inventory_bytes(root: Path) -> tuple[bytes | None, list[str]]:
    """inventory.yaml's bytes (None when there is none), or the problem reading it."""
    path = root / INVENTORY
    if not path.exists():
        return None, []
    if not path.is_file():
        return None, [f"{INVENTORY}: not a file"]
    try:
        return read_document(path), []
    except OSError as exc:
        return None, [f"{INVENTORY}: unreadable file: {exc.strerror or exc}"]
    except UnreadableFile as exc:
        return None, [f"{INVENTORY}: unreadable file: {exc}"]


def _parse_inventory(data: bytes | None) -> tuple[Mapping[str, Mapping[str, Any]], list[str]]:
    if data is None:
        return {}, []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {}, [f"{INVENTORY}: not UTF-8: {exc.reason} at byte {exc.start}"]
    return read_inventory(text, INVENTORY)


def scan_fingerprint(inventory: bytes | None, settings: Settings) -> str:
    """What decides a file's metadata besides its own bytes and path: inventory, settings, parser."""
    digest = hashlib.sha256(b"inventory:" + (inventory if inventory is not None else b"<none>"))
    digest.update(f"|settings:{settings!r}|parser:{PARSER_VERSION}".encode())
    return digest.hexdigest()


def listing_hash(root: Path, paths: list[Path], problems: list[DocumentProblems]) -> str:
    names = [path.relative_to(root).as_posix() for path in paths] + [p.source for p in problems]
    return hashlib.sha256("\n".join(names).encode("utf-8", "surrogateescape")).hexdigest()


def _reuse(paths: list[Path], root: Path, memo: ScanMemo) -> tuple[dict[str, Scanned], list[Path]]:
    """Hash every file; those the memo knows are accepted as stored (or rejected as last time,
    for the same reasons), the others still to check."""
    reused: dict[str, Scanned] = {}
    todo: list[Path] = []
    for path in paths:
        source = path.relative_to(root).as_posix()
        try:
            sha256 = hashlib.sha256(read_document(path)).hexdigest()
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
        document = SourceDocument(source=source, sha256=sha256, parsed=None, meta=meta, format=_format(path.name))
        reused[source] = Accepted(source, document, source in memo.defaulted)
    return reused, todo


def scan_corpus(
    root: Path,
    settings: Settings,
    on_file: Callable[[str], None] | None = None,
    skip_body: Collection[str] = frozenset(),
    *,
    workers: int | None = None,
    memo: ScanMemo | None = None,
    on_accepted: Callable[[Accepted], Accepted] | None = None,
    chunking: ChunkSettings | None = None,
) -> CorpusScan:
    """Parse and validate every document of the corpus at ``root``; writes nothing.

    ``on_file(source)`` is called for each file as its result arrives (for a progress bar).
    A file whose SHA-256 is in ``skip_body`` (bytes a store already holds, and so parsed
    fine before) has only its metadata read; its ``parsed`` is None. A file ``memo`` knows
    is only hashed (``parsed`` None too). ``workers``: parser processes (None: one per
    core, at most 8). ``on_accepted`` sees each file that passed its own checks as it arrives
    and returns what the scan keeps of it (a run chunks and writes it there and drops its body).
    ``chunking``: chunk every parsed document where it is parsed (in the worker processes); its
    ``Accepted.chunks`` carries them and its ``parsed`` is None (for ``on_accepted`` to write).
    """
    root = Path(root)
    if not (root / DOCUMENTS).is_dir():
        raise CorpusError(f"{root}: no {DOCUMENTS}/ folder; a corpus holds its files under {root / DOCUMENTS}")
    inventory_data, inventory_problems = _inventory_bytes(root)
    if inventory_problems:
        raise CorpusError("; ".join(inventory_problems) + " (fix inventory.yaml: nothing was checked or written)")
    fingerprint = scan_fingerprint(inventory_data, settings)
    listing = list_documents(root)
    paths = listing.paths
    listed = listing_hash(root, paths, listing.file_problems)
    reused: dict[str, Scanned] = {}
    todo = paths
    if memo is not None and memo.fingerprint == fingerprint:
        reused, todo = _reuse(paths, root, memo)
    inventory: Mapping[str, Mapping[str, Any]] = {}
    # Unchanged inventory, settings, listing and files: the last run's inventory checks still hold.
    inventory_skipped = not (
        todo
        or memo is None
        or memo.fingerprint != fingerprint
        or memo.listing != listed
        or INVENTORY in memo.problem_sources
    )
    if not inventory_skipped:
        inventory, inventory_problems = _parse_inventory(inventory_data)
        if inventory_problems:
            # Checking documents without the fields the inventory gives could index a guess
            # (a defaulted access label for a confidential file): stop, as for a bad ingest.toml.
            raise CorpusError("; ".join(inventory_problems) + " (fix inventory.yaml: nothing was checked or written)")
    checked = _check_files(
        todo, root, inventory, settings, skip_body, default_workers() if workers is None else workers, chunking
    )
    results = _in_order(paths, root, reused, checked, on_file, on_accepted)
    if not inventory_skipped:
        present = {path.relative_to(root / DOCUMENTS).as_posix() for path in paths}
        present |= {p.source.removeprefix(DOCUMENTS + "/") for p in listing.file_problems}
        for name in sorted(set(inventory) - present):
            inventory_problems.append(f"{INVENTORY}: {name}: names no file under {DOCUMENTS}/")
    return _assemble(root, results, listing, inventory_problems, fingerprint, listed)


def _in_order(
    paths: list[Path],
    root: Path,
    reused: Mapping[str, Scanned],
    checked: Iterator[Scanned],
    on_file: Callable[[str], None] | None,
    on_accepted: Callable[[Accepted], Accepted] | None = None,
) -> list[Scanned]:
    """Every file's result in the order of ``paths``: reused ones, and checked ones as they arrive."""
    results: list[Scanned] = []
    for path in paths:
        source = path.relative_to(root).as_posix()
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
) -> CorpusScan:
    """The scan from every file's result: checks between documents last."""
    formats = {name: 0 for name in FORMATS}
    for result in results:
        formats[_format(result.source)] += 1
    for problem in listing.file_problems:  # seen, and rejected
        formats[_format(problem.source)] += 1
    passed = [result for result in results if isinstance(result, Accepted)]
    rejected_keys = {result.key for result in results if isinstance(result, Rejected) and result.key}
    cross = cross_document_problems([(result.source, result.document.meta) for result in passed], rejected_keys)
    documents = []
    rejected = [result.problems for result in results if isinstance(result, Rejected)] + listing.file_problems
    defaulted: list[str] = []
    for result in passed:
        if result.source in cross:
            rejected.append(DocumentProblems(result.source, result.document.meta.doc_id, tuple(cross[result.source])))
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
        inventory_problems=tuple(inventory_problems),
        folder_problems=tuple(listing.folder_problems),
        fingerprint=fingerprint,
        listing=listed,
        defaulted_sources=tuple(sorted(defaulted)),
        rejected_files=tuple(r for r in results if isinstance(r, Rejected) and r.sha256),
    )
