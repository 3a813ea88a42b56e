"""The corpus scan: every file under ``CORPUS/documents/``, parsed and validated in one pass.

Each file is read once (its bytes give both the SHA-256 and the parse). A file that
cannot be read or resolved is rejected with every reason; the others go on. Checks
between documents (duplicates, overlapping versions, dangling ``superseded_by``) run
last, over the documents that passed their own checks.
"""

from __future__ import annotations

import errno
import hashlib
import multiprocessing
import os
import signal
import stat
import threading
import time
from collections.abc import Callable, Container, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.metadata import (
    INVENTORY,
    cross_document_problems,
    found_doc_id,
    found_key,
    read_inventory,
    resolve_metadata,
)
from ingest.model import FORMATS, DocumentProblems, SourceDocument, UnreadableFile
from ingest.parse import MAX_BYTES, SUFFIXES, format_of, parse_bytes, read_metadata
from ingest.settings import Settings

DOCUMENTS = "documents"


class CorpusError(Exception):
    """The corpus folder itself is unusable (no ``documents/`` folder): a usage error (exit 2)."""


@dataclass(frozen=True)
class CorpusScan:
    root: Path
    documents: tuple[SourceDocument, ...]  # valid ones, sorted by source
    rejected: tuple[DocumentProblems, ...]  # sorted by source
    formats: Mapping[str, int]  # files seen per format, every format listed
    defaulted_access: int  # valid documents whose access came from settings.access_default
    inventory_problems: tuple[str, ...] = ()  # inventory.yaml itself: malformed, or names missing files
    folder_problems: tuple[DocumentProblems, ...] = ()  # folders that could not be listed

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


def _hidden(relative: Path) -> bool:
    return any(part.startswith(".") for part in relative.parts)


def shown(source: str) -> str:
    """A path for messages: bytes that are not UTF-8 (kept by the file system as
    surrogates) written as \\xNN, so the text is always valid and never a raw byte."""
    return source.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


@dataclass(frozen=True)
class Listing:
    """What a walk of ``documents/`` found: files to read, and paths that are problems."""

    paths: list[Path]
    file_problems: list[DocumentProblems]  # a path that looks like a document but cannot be one
    folder_problems: list[DocumentProblems]  # a folder that could not be listed


def list_documents(root: Path) -> Listing:
    """Every supported file under ``root/documents``, sorted by its path relative to root,
    and every path that cannot be read, as a problem naming it.

    Hidden files and folders are skipped. Symlinked folders are not entered, and a
    symlinked file is kept only when its target lies inside the corpus root, so a scan
    never reads outside the corpus. A folder that cannot be listed, a FIFO, device or
    socket with a document's name, a symlink loop and a name that is not UTF-8 are
    problems: the documents they may hold are never taken for deleted.
    """
    root = Path(root)
    documents = root / DOCUMENTS
    real_root = root.resolve()
    found: list[Path] = []
    files_bad: list[DocumentProblems] = []
    folders_bad: list[DocumentProblems] = []

    # A problem's `source` is the exact path (a name that is not UTF-8 keeps its bytes as
    # surrogates, so os.fsencode gives them back); its message shows it escaped.
    def unlistable(exc: OSError) -> None:
        where = Path(exc.filename).relative_to(root).as_posix() if exc.filename else DOCUMENTS
        message = f"{shown(where)}: unreadable folder: {exc.strerror or exc}; the documents stored from it are kept"
        folders_bad.append(DocumentProblems(where, None, (message,)))

    def bad(path: Path, reason: str) -> None:
        source = path.relative_to(root).as_posix()
        files_bad.append(DocumentProblems(source, None, (f"{shown(source)}: {reason}",)))

    for folder, subfolders, files in os.walk(documents, onerror=unlistable, followlinks=False):
        subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
        for name in files:
            path = Path(folder) / name
            if name.startswith(".") or path.suffix.lower() not in SUFFIXES:
                continue
            relative = path.relative_to(root).as_posix()
            if shown(relative) != relative:
                bad(path, "file name is not valid UTF-8; rename the file")
                continue
            try:
                if path.is_symlink():
                    target = path.resolve(strict=True)
                    if not target.is_relative_to(real_root):
                        continue  # outside the corpus: never read (documented)
                mode = path.stat().st_mode
            except RuntimeError:
                bad(path, "symlink loop")
                continue
            except OSError as exc:
                reason = "symlink loop" if exc.errno == errno.ELOOP else f"unreadable file: {exc.strerror or exc}"
                if exc.errno == errno.ENOENT and path.is_symlink():
                    reason = "broken symlink (its target does not exist)"
                bad(path, reason)
                continue
            if not stat.S_ISREG(mode):
                bad(path, f"unreadable file: {_kind(mode)}, not a regular file; never opened")
                continue
            found.append(path)
    return Listing(
        sorted(found, key=lambda path: path.relative_to(root).as_posix()),
        sorted(files_bad, key=lambda p: p.source),
        sorted(folders_bad, key=lambda p: p.source),
    )


def discover(root: Path) -> list[Path]:
    """Every readable supported file under ``root/documents`` (see ``list_documents``)."""
    return list_documents(root).paths


def read_document(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of a regular file, read safely: never more than ``limit`` + 1 bytes, never
    blocking on a FIFO swapped in after listing, never a file that changed while read.

    Raises UnreadableFile (too large, not a regular file, changed while read) or OSError.
    """
    # O_NONBLOCK: opening a FIFO does not wait for a writer; fstat then refuses it.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise UnreadableFile(f"{_kind(before.st_mode)}, not a regular file; not read")
        if before.st_size > limit:
            raise UnreadableFile(f"file too large ({before.st_size} bytes; limit {limit})")
        chunks, total = [], 0
        while total <= limit:
            piece = os.read(fd, min(1 << 20, limit + 1 - total))
            if not piece:
                break
            chunks.append(piece)
            total += len(piece)
        if total > limit:
            raise UnreadableFile(f"file too large (over {limit} bytes while reading; limit {limit})")
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns) or total != before.st_size:
        raise UnreadableFile("the file changed while it was being read; run again when it is complete")
    return b"".join(chunks)


PARALLEL_MIN_FILES = 64  # below this, starting worker processes costs more than it saves


def _workers() -> int:
    """Worker processes for parsing: INGEST_WORKERS, else one per core (at most 8)."""
    configured = os.environ.get("INGEST_WORKERS", "").strip()
    if configured.isdigit():
        return max(1, int(configured))
    return min(os.cpu_count() or 1, 8)


def _check_files(
    paths: list[Path], root: Path, inventory: Mapping[str, dict], settings: Settings, skip_body: Container[str]
) -> Iterator[_FileResult]:
    """Every file's result, in the order of ``paths``; parsed in worker processes when it pays.

    Parsing is a pure function of the bytes, so it spreads over cores without changing a
    result. Workers are spawned (not forked: the caller may hold threads and locks).
    """
    workers = _workers()
    # Files whose bytes are already stored only have their metadata read: cheap, not worth a worker.
    if workers < 2 or len(paths) - len(skip_body) < PARALLEL_MIN_FILES:
        for path in paths:
            yield _check_file(path, root, inventory, settings, skip_body)
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=_init_worker,
        initargs=(root, dict(inventory), settings, frozenset(skip_body), os.getpid()),
    ) as pool:
        yield from pool.map(_check_in_worker, paths, chunksize=16)


_worker_args: tuple = ()


def _init_worker(root: Path, inventory: dict, settings: Settings, skip_body: frozenset[str], parent: int) -> None:
    global _worker_args
    _worker_args = (root, inventory, settings, skip_body)
    _die_with(parent)


def _die_with(parent: int) -> None:
    """A worker must not outlive the run that started it (a killed `ingest run` would leave
    it blocked forever): on Linux the kernel kills it when the parent dies (PR_SET_PDEATHSIG);
    everywhere, a watcher thread exits it once its parent is gone."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the watcher below is enough
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="ingest-parent-watch", daemon=True).start()


def _check_in_worker(path: Path) -> _FileResult:
    root, inventory, settings, skip_body = _worker_args
    return _check_file(path, root, inventory, settings, skip_body)


@dataclass(frozen=True)
class _FileResult:
    source: str
    document: SourceDocument | None
    problems: DocumentProblems | None
    defaulted: bool = False
    key: str | None = None  # doc_id@version a rejected file declares


def _check_file(
    path: Path, root: Path, inventory: Mapping[str, dict], settings: Settings, skip_body: Container[str] = ()
) -> _FileResult:
    source = path.relative_to(root).as_posix()
    entry = inventory.get(path.relative_to(root / DOCUMENTS).as_posix())
    try:
        data = read_document(path)
    except OSError as exc:
        return _rejected(source, {}, entry, [f"{source}: unreadable file: {exc.strerror or exc}"])
    except UnreadableFile as exc:
        return _rejected(source, {}, entry, [f"{source}: unreadable file: {exc}"])
    sha256 = hashlib.sha256(data).hexdigest()
    try:
        if sha256 in skip_body:
            parsed, fields = None, read_metadata(data, path.name)
        else:
            parsed = parse_bytes(data, path.name)
            fields = parsed.metadata
    except UnreadableFile as exc:
        return _rejected(source, {}, entry, [f"{source}: unreadable file: {exc}"])
    except Exception as exc:  # a parser bug must not stop the other files; report it as such
        return _rejected(source, {}, entry, [f"{source}: unreadable file: parser error: {type(exc).__name__}: {exc}"])
    meta, problems, defaulted = resolve_metadata(source, fields, entry, settings)
    if meta is None:
        return _rejected(source, fields, entry, problems)
    document = SourceDocument(source=source, sha256=sha256, parsed=parsed, meta=meta, format=format_of(path.name))
    if parsed is not None:
        # The term limit does not depend on chunk settings: `validate` refuses what `run` would.
        from ingest.chunk import ChunkLimitExceeded, check_headings, check_terms

        try:
            check_terms(parsed.text, document)
            check_headings(parsed.blocks)
        except ChunkLimitExceeded as exc:
            return _rejected(source, fields, entry, [f"{source}: {exc}"])
    return _FileResult(source, document, None, defaulted)


def _rejected(source: str, fields: Any, entry: Mapping | None, problems: list[str]) -> _FileResult:
    record = DocumentProblems(source, found_doc_id(fields, entry), tuple(problems))
    return _FileResult(source, None, record, key=found_key(fields, entry))


def _load_inventory(root: Path) -> tuple[dict[str, dict], list[str]]:
    path = root / INVENTORY
    if not path.exists():
        return {}, []
    if not path.is_file():
        return {}, [f"{INVENTORY}: not a file"]
    try:
        text = read_document(path).decode("utf-8")
    except OSError as exc:
        return {}, [f"{INVENTORY}: unreadable file: {exc.strerror or exc}"]
    except UnreadableFile as exc:
        return {}, [f"{INVENTORY}: unreadable file: {exc}"]
    except UnicodeDecodeError as exc:
        return {}, [f"{INVENTORY}: not UTF-8: {exc.reason} at byte {exc.start}"]
    return read_inventory(text, INVENTORY)


def scan_corpus(
    root: Path,
    settings: Settings,
    on_file: Callable[[str], None] | None = None,
    skip_body: Container[str] = frozenset(),
) -> CorpusScan:
    """Parse and validate every document of the corpus at ``root``; writes nothing.

    ``on_file(source)`` is called before each file is read (for a progress bar).
    A file whose SHA-256 is in ``skip_body`` (bytes a store already holds, and so parsed
    fine before) has only its metadata read; its ``parsed`` is None.
    """
    root = Path(root)
    if not (root / DOCUMENTS).is_dir():
        raise CorpusError(f"{root}: no {DOCUMENTS}/ folder; a corpus holds its files under {root / DOCUMENTS}")
    inventory, inventory_problems = _load_inventory(root)
    if inventory_problems:
        # Checking documents without the fields the inventory gives could index a guess
        # (a defaulted access label for a confidential file): stop, as for a bad ingest.toml.
        raise CorpusError("; ".join(inventory_problems) + " (fix inventory.yaml: nothing was checked or written)")
    listing = list_documents(root)
    paths = listing.paths
    formats = {name: 0 for name in FORMATS}
    for path in paths:
        formats[format_of(path.name)] += 1
    for problem in listing.file_problems:  # seen, and rejected
        formats[format_of(problem.source)] += 1
    results: list[_FileResult] = []
    for result in _check_files(paths, root, inventory, settings, skip_body):
        if on_file is not None:
            on_file(result.source)
        results.append(result)

    present = {path.relative_to(root / DOCUMENTS).as_posix() for path in paths}
    present |= {p.source.removeprefix(DOCUMENTS + "/") for p in listing.file_problems}
    for name in sorted(set(inventory) - present):
        inventory_problems.append(f"{INVENTORY}: {name}: names no file under {DOCUMENTS}/")

    passed = [result for result in results if result.document is not None]
    rejected_keys = {result.key for result in results if result.key}
    cross = cross_document_problems([(result.source, result.document.meta) for result in passed], rejected_keys)
    documents = []
    rejected = [result.problems for result in results if result.problems is not None] + listing.file_problems
    defaulted = 0
    for result in passed:
        if result.source in cross:
            rejected.append(DocumentProblems(result.source, result.document.meta.doc_id, tuple(cross[result.source])))
        else:
            documents.append(result.document)
            defaulted += result.defaulted
    return CorpusScan(
        root=root,
        documents=tuple(sorted(documents, key=lambda document: document.source)),
        rejected=tuple(sorted(rejected, key=lambda record: record.source)),
        formats=formats,
        defaulted_access=defaulted,
        inventory_problems=tuple(inventory_problems),
        folder_problems=tuple(listing.folder_problems),
    )
