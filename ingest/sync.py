"""The write side of a run: chunks written while the scan parses, plan batches, store refusals,
and what a full rebuild carries over."""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, BinaryIO

from ingest.corpus import CorpusScan
from ingest.file_check import Accepted
from ingest.journal import _Journal
from ingest.model import (
    CHUNK_ID_LENGTH,
    Chunk,
    DocumentMeta,
    DocumentProblems,
    DocumentRecord,
    ScannedDocument,
    SourceDocument,
    UnparsedDocument,
    made,
)
from ingest.plan import Plan, PlannedDocument, ToWrite, WrittenChunks, keep_reason, record_for
from ingest.run_result import RunResult
from ingest.settings import ChunkSettings
from ingest.store.base import ItemError, Store, batched

if TYPE_CHECKING:  # imported where chunks are made: a run with nothing to chunk never loads the chunker
    from ingest.chunk import ChunkLimitExceeded


class _SpilledChunks(WrittenChunks):
    """The chunk IDs of one document, kept in the run's spill file (see ``_IdSpill``)."""

    def __init__(self, spill: _IdSpill, offset: int, count: int) -> None:
        self._spill, self._offset, self._count = spill, offset, count

    def __len__(self) -> int:
        return self._count

    def ids(self) -> list[str]:
        packed = self._spill.read(self._offset, self._count * _PACKED_ID)
        return [packed[i : i + _PACKED_ID].hex() for i in range(0, len(packed), _PACKED_ID)]


class _HeldChunks(_SpilledChunks):
    """The chunks of one document still to write (a stored version rewritten), pickled into the
    run's spill file after their IDs until their write batch reads them back."""

    def __init__(self, spill: _IdSpill, offset: int, count: int, size: int) -> None:
        super().__init__(spill, offset, count)
        self._size = size

    def chunks(self) -> list[Chunk]:
        ids_size = self._count * _PACKED_ID
        found: list[Chunk] = pickle.loads(self._spill.read(self._offset + ids_size, self._size - ids_size))
        return found


_PACKED_ID = CHUNK_ID_LENGTH // 2  # bytes of one chunk ID (hex) packed
_COUNT_BITS = 32  # a spilled document's handle: offset << _COUNT_BITS | count (one int, not an object)


def _handle(ids: WrittenChunks) -> WrittenChunks | int:
    """What a run keeps per written document until its plan takes it: one int for spilled IDs (about 36
    bytes, against some 150 for the object), so the per-document state of a 1M-chunk run stays small."""
    if type(ids) is _SpilledChunks and ids._count < 1 << _COUNT_BITS:
        return ids._offset << _COUNT_BITS | ids._count
    return ids


def _light(doc: UnparsedDocument) -> UnparsedDocument:
    """``doc`` as the scan keeps it until its record is written: the values most documents share
    (access label, status, format) as one string each, not one copy per document received from a
    parser process (a run holds every document's metadata until the checks between documents)."""
    meta = doc.meta
    # made(), not dataclasses.replace: the same values, without two __init__ calls per document
    shared = made(DocumentMeta, {**meta.__dict__, "access": sys.intern(meta.access), "status": sys.intern(meta.status)})
    return made(UnparsedDocument, {**doc.__dict__, "meta": shared, "format": sys.intern(doc.format)})


_SPILL_FLUSH = 1 << 18  # bytes gathered before one write to the spill file (a system call per document
# released the GIL to the writer and parser-result threads each time, stalling the scan's loop)


class _IdSpill:
    """The IDs of the chunks a run wrote during its scan, packed into an unnamed temporary file
    until their records are written: a run holds a few bytes per document, none per chunk. The
    file has no name and closes with the last reference (the result's plan lists these IDs too).
    The newest bytes, up to ``_SPILL_FLUSH``, wait in memory and are written in one go."""

    def __init__(self) -> None:
        self._file: BinaryIO | None = None
        self._end = 0  # offset after the last byte kept (in the file or waiting)
        self._waiting = bytearray()  # the bytes from offset self._end - len(self._waiting) on
        self._lock = threading.Lock()

    def keep(self, ids: Iterable[str]) -> WrittenChunks:
        ids = list(ids)
        try:
            if not all(len(i) == CHUNK_ID_LENGTH for i in ids):
                raise ValueError("not a packable chunk ID")
            packed = b"".join(bytes.fromhex(i) for i in ids)
        except ValueError:
            return WrittenChunks(ids)  # IDs of another shape stay in memory, as they are
        return _SpilledChunks(self, self._append(packed), len(ids))

    def hold(self, chunks: list[Chunk]) -> WrittenChunks | list[Chunk]:
        """``chunks`` kept in the file (their IDs first), or as they are when the IDs do not pack."""
        ids = self.keep(c.chunk_id for c in chunks)
        if not isinstance(ids, _SpilledChunks):
            return chunks
        data = pickle.dumps(chunks, protocol=pickle.HIGHEST_PROTOCOL)
        self._append(data)
        return _HeldChunks(self, ids._offset, ids._count, ids._count * _PACKED_ID + len(data))

    def _append(self, data: bytes) -> int:
        """Keep ``data``; its offset."""
        with self._lock:
            offset = self._end
            self._waiting += data
            self._end += len(data)
            if len(self._waiting) >= _SPILL_FLUSH:
                self._flush()
            return offset

    def _flush(self) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="ingest-chunk-ids-", buffering=0)  # noqa: SIM115 - lives with the run
        os.pwrite(self._file.fileno(), self._waiting, self._end - len(self._waiting))
        self._waiting.clear()

    def read(self, offset: int, size: int) -> bytes:
        if size == 0:
            return b""  # a document without chunks: nothing was written for it
        with self._lock:
            if self._waiting:
                self._flush()  # reads come after the scan: the tail goes to the file once
            assert self._file is not None
            data = os.pread(self._file.fileno(), size, offset)
        if len(data) != size:
            raise OSError(f"chunk ID spill file: read {len(data)} of {size} bytes")
        return data


_Batched = tuple[ScannedDocument, list[Chunk]]  # a document version and its chunks, to write now
_QUEUED = 2  # write batches waiting for the writer thread at most (memory: a few batches of chunks)


class _BatchWriter:
    """The thread that writes the scan's batches in order while the run's own process goes on
    receiving parsed documents from the workers (a bulk request, or a SQLite transaction, no
    longer holds up the pipeline). At most ``_QUEUED`` batches wait; the first exception of a
    write stops the thread, drops what is queued and is raised in the run (``raise_failure``)
    exactly as a write in the run's own thread would have raised it."""

    def __init__(self, write: Callable[[list[_Batched]], None], prepare: Callable[[], None] | None = None) -> None:
        self._write, self._prepare = write, prepare
        self._queue: queue.Queue[list[_Batched] | None] = queue.Queue(maxsize=_QUEUED)
        self._failure: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ingest-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            if self._prepare is not None:
                self._prepare()  # e.g. the indices a first build creates, while the first batch fills
        except BaseException as exc:  # noqa: BLE001 - handed to the run's thread, raised there
            self._failure = exc
        while True:
            batch = self._queue.get()
            if batch is None:
                return
            if self._failure is not None or self._stop.is_set():
                continue  # drain without writing: the run is stopping
            try:
                self._write(batch)
            except BaseException as exc:  # noqa: BLE001 - handed to the run's thread, raised there
                self._failure = exc

    def raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    def put(self, batch: list[_Batched]) -> None:
        self.raise_failure()
        while True:
            try:
                self._queue.put(batch, timeout=0.5)
                return
            except queue.Full:
                self.raise_failure()  # the writer may have failed while the queue was full

    def finish(self) -> None:
        self._queue.put(None)
        self._thread.join()
        self.raise_failure()

    def abandon(self) -> None:
        self._stop.set()
        with contextlib.suppress(queue.Full):
            while True:  # make room for the end mark: queued batches are dropped
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    break
            self._queue.put_nowait(None)
        self._thread.join()


class _EarlyWriter:
    """Chunks each new document version the moment the scan has parsed it and writes its chunks
    in batches, so parsing (in worker processes), chunking and writing overlap and no document's
    body or chunks stay in memory; the records follow after the scan's cross-document checks.
    The batches are written by a thread (``_BatchWriter``) while the scan goes on.

    Only a store no reader sees until the run ends (``hidden``: a full rebuild's fresh store) is
    written during the scan. A live store's search does not ask for a record, so chunks written
    now would be readable before the checks between documents (and the plan's) could reject their
    document — a public copy of a staff document, two versions in force, a default-widened label —
    and after a killed run until the next one: there every version's chunks wait on disk (the
    spill file) and the plan writes them once the checks have passed (and journals them). What the
    checks reject of a fresh store's writes is deleted again (``undo_rejected``). Without a store (a
    dry run) it only chunks, to count.
    """

    def __init__(
        self,
        store: Store | None,
        stored: Mapping[str, DocumentRecord],
        chunking: ChunkSettings,
        batch_chunks: int,
        *,
        hidden: bool = False,
    ) -> None:
        self.store, self.stored, self.chunking, self.hidden = store, stored, chunking, hidden
        self.batch_chunks = batch_chunks
        # by source; an int is a spilled document's IDs (see ``_handle``)
        self.chunked: dict[str, WrittenChunks | int | list[Chunk] | ChunkLimitExceeded] = {}
        self.refused: dict[str, ItemError] = {}  # by chunk ID
        self.errors: list[ItemError] = []
        self.written = 0
        self.spill = _IdSpill()
        self._batch: list[_Batched] = []
        self._size = 0
        self._writer: _BatchWriter | None = None  # started with the first version to write

    def __call__(self, accepted: Accepted) -> Accepted:
        if self._writer is not None:
            self._writer.raise_failure()  # a store failure stops the scan at the next document
        doc = accepted.document
        chunks = accepted.chunks  # chunked by the worker that parsed it (scan_corpus(chunking=…))
        if chunks is None and not isinstance(doc, SourceDocument):
            return accepted  # its bytes are stored: nothing parsed, nothing to write now
        from ingest.chunk import ChunkLimitExceeded, chunk_document

        if chunks is None:
            assert isinstance(doc, SourceDocument)
            body_dropped = doc.without_body()
            if doc.meta.key in self.stored:
                return Accepted(accepted.source, body_dropped, accepted.defaulted)  # see below: the plan chunks it
            try:
                chunks = chunk_document(doc, self.chunking)
            except ChunkLimitExceeded as exc:
                chunks = exc
            doc = body_dropped
        light = Accepted(accepted.source, _light(doc) if isinstance(doc, UnparsedDocument) else doc, accepted.defaulted)
        if isinstance(chunks, ChunkLimitExceeded):
            self.chunked[doc.source] = chunks
            return light
        if doc.meta.key in self.stored or not self.hidden:
            # Written only after the checks between documents (see the class): a stored version's
            # chunk IDs are the stored ones, and a new version's would be readable at once. Its
            # chunks wait on disk for the plan.
            self.chunked[doc.source] = self.hold(chunks)
            return light
        self.chunked[doc.source] = _handle(self.spill.keep(c.chunk_id for c in chunks))
        if self.store is not None:
            if self._writer is None:  # the first version to write: the writer starts preparing the store
                self._writer = _BatchWriter(self._write, getattr(self.store, "ensure_layout", None))
            self._batch.append((doc, chunks))
            self._size += len(chunks)
            if self._size >= self.batch_chunks:
                self.flush()
        return light

    def flush(self) -> None:
        """Hand the batch so far to the writer thread (waiting while it is ``_QUEUED`` batches behind)."""
        if not self._batch or self.store is None:
            return
        batch, self._batch, self._size = self._batch, [], 0
        assert self._writer is not None  # started with the batch's first document
        self._writer.put(batch)

    def finish(self) -> None:
        """Write what is left and wait for every batch: the counts, refusals and errors are final
        after this (a failure of the store in the writer thread is raised here, unchanged)."""
        self.flush()
        if self._writer is not None:
            self._writer.finish()

    def abandon(self) -> None:
        """The run stops (an error elsewhere): queued batches are dropped, the one being written
        ends, and nothing is written after this returns (the run may be about to release its lock)."""
        if self._writer is not None:
            self._writer.abandon()
        self._batch, self._size = [], 0

    def _write(self, batch: list[_Batched]) -> None:
        """One batch of a fresh store (no journal: a killed rebuild is dropped whole), in the writer thread."""
        assert self.store is not None
        report = self.store.write_chunks(c for _, chunks in batch for c in chunks)
        self.written += report.written
        self.errors.extend(report.errors)
        self.refused.update((e.id, e) for e in report.errors)

    def hold(self, chunks: list[Chunk]) -> WrittenChunks | list[Chunk]:
        """The chunks of a document the plan writes later (a stored version's rewrite), out of
        memory until then; a dry run keeps only their IDs (it writes nothing)."""
        return self.spill.hold(chunks) if self.store is not None else self.spill.keep(c.chunk_id for c in chunks)

    def take(self, source: str) -> WrittenChunks | list[Chunk]:
        from ingest.chunk import ChunkLimitExceeded

        found = self._unpack(self.chunked.pop(source))
        if isinstance(found, ChunkLimitExceeded):
            raise found
        return found

    def _unpack(
        self, kept: WrittenChunks | int | list[Chunk] | ChunkLimitExceeded
    ) -> WrittenChunks | list[Chunk] | ChunkLimitExceeded:
        if isinstance(kept, int):
            return _SpilledChunks(self.spill, kept >> _COUNT_BITS, kept & ((1 << _COUNT_BITS) - 1))
        return kept

    def undo_rejected(self) -> None:
        """Delete the chunks written for documents the plan did not take (e.g. rejected by the
        checks between documents). Only versions the store does not hold are written during the
        scan, so none of these IDs is listed by a stored record."""
        if self.store is None:
            return
        undo: list[str] = []
        for kept in self.chunked.values():
            chunks = self._unpack(kept)
            if isinstance(chunks, WrittenChunks) and not isinstance(chunks, _HeldChunks):  # written
                undo += chunks.ids()
        if undo:
            self.store.delete_chunks(undo)
            # Written and removed again within the run: not counted as written.
            self.written -= sum(1 for chunk_id in undo if chunk_id not in self.refused)
        self.chunked.clear()


DEFAULT_WRITE_BATCH_CHUNKS = 2000  # chunks per write batch: a few bulk requests, bounded memory


def _refusal(doc: ScannedDocument, errors: list[ItemError], old: DocumentRecord | None) -> DocumentProblems:
    first = errors[0]
    if old is not None and old.key == doc.meta.key and old.access != doc.meta.access:
        # Moving to another access label takes each chunk out of its old label's index first
        # (never readable under both): what was refused is gone from the old label too.
        kept = (
            f"; the stored version {old.version} was taken out of access {old.access!r} first and is not "
            "searchable until a run writes it again (the next run does)"
        )
    else:
        kept = f"; the stored version {old.version} stays searchable" if old else ""
    more = f" (and {len(errors) - 1} more chunks)" if len(errors) > 1 else ""
    return DocumentProblems(
        doc.source,
        doc.meta.doc_id,
        (
            f"{doc.source}: refused by the store: chunk {first.id}: {first.reason}{more}; "
            f"nothing of {doc.meta.key} was written{kept}",
        ),
    )


def _write_plan(
    store: Store,
    plan: Plan,
    fingerprint: str,
    result: RunResult,
    tick: Callable[[int], None],
    batch_chunks: int,
    *,
    journal: _Journal | None = None,
    refused: Mapping[str, ItemError] | None = None,
) -> None:
    """Apply a plan batch by batch: chunks (unless written during the scan), then records, then
    what they replace.

    A document with a refused chunk gets no record: it stays absent (or as it was), never
    half-live; its written chunks are removed again, it counts as rejected, and no stored
    version of its doc_id is removed by this run. Versions that left the folder are removed
    last, after every replacement's chunks and record are in. ``journal`` records each batch's
    versions first (a fresh store of a full rebuild needs none); ``refused``: chunk IDs the store
    refused while the scan wrote them.
    """
    for batch in batched(plan.to_write, batch_chunks, lambda item: len(item[1])):
        if journal is not None:
            journal.add(doc.meta.key for doc, _, _ in batch)
        _write_batch(store, plan, batch, fingerprint, result, refused or {})
        tick(len(batch))
    removals = []
    for old in plan.to_remove:
        if not plan.keeps_after_refusal(old):
            removals.append(old)
    for group in batched(removals, batch_chunks, lambda record: record.chunk_count):
        if journal is not None:
            journal.add(old.key for old in group)
        store.delete_documents([old.key for old in group])
        result.deleted += store.delete_chunks([cid for old in group for cid in old.chunk_ids])
    if plan.to_remove:
        tick(len(plan.to_remove))


def _write_batch(
    store: Store,
    plan: Plan,
    batch: list[ToWrite],
    fingerprint: str,
    result: RunResult,
    early_refused: Mapping[str, ItemError],
) -> None:
    """One batch: its chunks, the records of the documents whose chunks all went in, then the
    chunks those records replace (and the written chunks of refused documents)."""
    report = store.write_chunks(c for _, chunks, _ in batch for c in _unwritten(chunks))
    result.written += report.written
    refused: Mapping[str, ItemError] = (
        {**early_refused, **{e.id: e for e in report.errors}} if report.errors else early_refused
    )
    result.errors.extend(report.errors)
    records: list[DocumentRecord] = []
    stale: list[str] = []
    undo: list[str] = []
    for doc, chunks, old in batch:
        ids = [c.chunk_id for c in chunks]
        errors = [refused[cid] for cid in ids if cid in refused]
        if errors:
            # IDs a stored version of the document lists are its own: they stay
            keep = set(old.chunk_ids if old else ())
            keep.update(cid for other in plan.to_remove if other.doc_id == doc.meta.doc_id for cid in other.chunk_ids)
            undo += [cid for cid in ids if cid not in keep]
            plan.hold(doc, old)
            plan.problems.append(_refusal(doc, errors, old))
            plan.set_action(doc.meta.key, "rejected", f"refused by the store: {errors[0].reason}")
            continue
        records.append(record_for(doc, chunks, fingerprint))
        if old is not None:
            stale += sorted(set(old.chunk_ids) - set(ids))
    if undo:
        store.delete_chunks(undo)
    store.put_documents(records)
    if stale:
        result.deleted += store.delete_chunks(stale)


def _release_written(plan: Plan, result: RunResult) -> None:
    """Once written, the plan keeps of its documents only those with chunks the store refused (the
    run's report names their files): not every document's metadata and chunk IDs until the end."""
    if not result.errors:
        plan.to_write = []
        return
    refused = {e.id for e in result.errors}
    plan.to_write = [item for item in plan.to_write if any(c.chunk_id in refused for c in item[1])]


def _unwritten(chunks: list[Chunk] | WrittenChunks) -> list[Chunk]:
    """The chunks a batch still has to write (none when the scan wrote them)."""
    if isinstance(chunks, _HeldChunks):
        return chunks.chunks()
    return chunks if isinstance(chunks, list) else []


def _carry_over(
    old_store: Store, fresh: Store, candidates: list[DocumentRecord], scan: CorpusScan, plan: Plan
) -> list[DocumentRecord]:
    """In a full rebuild, copy into the new store the stored versions this run must keep
    (unreadable, rejected or refused replacements): a rebuild never loses a good version."""
    carried = []
    rejected_sources = frozenset(p.source for p in scan.rejected)
    for old in candidates:
        why = keep_reason(old, scan, plan.held, rejected_sources, plan.replaced, plan.claims)
        if why is None:
            continue
        chunks = old_store.document_chunks(old.doc_id, old.version)
        if {c.chunk_id for c in chunks} != set(old.chunk_ids):
            continue  # incomplete in the old store: nothing good to keep
        report = fresh.write_chunks(chunks)
        if report.errors:
            continue
        fresh.put_documents([old])
        carried.append(old)
        plan.items.append(PlannedDocument("kept", old.key, old.source, why))
    return carried


def _ticker(progress: Callable[[int, int], None] | None, total: int) -> Callable[[int], None]:
    """A counter that reports (done, total) to a progress callback as writes finish."""
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    return tick
