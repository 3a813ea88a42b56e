"""The write side of a run: chunks written while the scan parses, plan batches, store refusals,
and what a full rebuild carries over."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ingest.chunk import ChunkLimitExceeded, chunk_document
from ingest.corpus import Accepted, CorpusScan
from ingest.journal import _Journal
from ingest.model import Chunk, DocumentProblems, DocumentRecord, ScannedDocument, SourceDocument, UnparsedDocument
from ingest.plan import Plan, PlannedDocument, RunResult, ToWrite, WrittenChunks, keep_reason, record_for
from ingest.settings import ChunkSettings
from ingest.store.base import ItemError, Store, batched


class _EarlyWriter:
    """Chunks each new document version the moment the scan has parsed it and writes its chunks
    in batches, so parsing (in worker processes), chunking and writing overlap and no document's
    body or chunks stay in memory; the records follow after the scan's cross-document checks.

    Chunks without a record are orphans, never searchable as a document version's; the journal
    names their keys first, and what the checks then reject is deleted again (``undo_rejected``).
    Without a store (a dry run) it only chunks, to count.
    """

    def __init__(
        self,
        store: Store | None,
        stored: Mapping[str, DocumentRecord],
        chunking: ChunkSettings,
        batch_chunks: int,
        journal: _Journal | None,
    ) -> None:
        self.store, self.stored, self.chunking = store, stored, chunking
        self.batch_chunks, self.journal = batch_chunks, journal
        self.chunked: dict[str, WrittenChunks | ChunkLimitExceeded] = {}  # by source
        self.keys: dict[str, str] = {}  # source -> doc_id@version
        self.refused: dict[str, ItemError] = {}  # by chunk ID
        self.errors: list[ItemError] = []
        self.written = 0
        self._batch: list[tuple[UnparsedDocument, list[Chunk]]] = []
        self._size = 0

    def __call__(self, accepted: Accepted) -> Accepted:
        doc = accepted.document
        if not isinstance(doc, SourceDocument):
            return accepted
        body_dropped = doc.without_body()
        light = Accepted(accepted.source, body_dropped, accepted.defaulted)
        if doc.meta.key in self.stored:
            # A stored version is rewritten only after the checks between documents: its chunk IDs
            # are the stored ones, and writing them now could change what readers see of it.
            return light
        try:
            chunks = chunk_document(doc, self.chunking)
        except ChunkLimitExceeded as exc:
            self.chunked[doc.source] = exc
            return light
        self.chunked[doc.source] = WrittenChunks(c.chunk_id for c in chunks)
        self.keys[doc.source] = doc.meta.key
        if self.store is not None:
            self._batch.append((body_dropped, chunks))
            self._size += len(chunks)
            if self._size >= self.batch_chunks:
                self.flush()
        return light

    def flush(self) -> None:
        if not self._batch or self.store is None:
            return
        if self.journal is not None:
            self.journal.add(doc.meta.key for doc, _ in self._batch)
        report = self.store.write_chunks(c for _, chunks in self._batch for c in chunks)
        self.written += report.written
        self.errors.extend(report.errors)
        self.refused.update((e.id, e) for e in report.errors)
        self._batch, self._size = [], 0

    def take(self, source: str) -> WrittenChunks:
        found = self.chunked.pop(source)
        self.keys.pop(source, None)
        if isinstance(found, ChunkLimitExceeded):
            raise found
        return found

    def undo_rejected(self) -> None:
        """Delete the chunks written for documents the plan did not take (e.g. rejected by the
        checks between documents); IDs a stored version lists are its own and stay."""
        if self.store is None:
            return
        undo: list[str] = []
        for source, chunks in self.chunked.items():
            if isinstance(chunks, WrittenChunks):
                old = self.stored.get(self.keys[source])
                keep = set(old.chunk_ids) if old else set()
                undo += [cid for cid in chunks.ids() if cid not in keep]
        if undo:
            self.store.delete_chunks(undo)
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
    stored_ids: dict[str, set[str]] = {}  # doc_id -> chunk IDs some stored version lists
    for old in plan.to_remove:
        stored_ids.setdefault(old.doc_id, set()).update(old.chunk_ids)
    for batch in batched(plan.to_write, batch_chunks, lambda item: len(item[1])):
        if journal is not None:
            journal.add(doc.meta.key for doc, _, _ in batch)
        _write_batch(store, plan, batch, fingerprint, result, stored_ids, refused or {})
        tick(len(batch))
    removals = []
    for old in plan.to_remove:
        if old.doc_id in plan.held and not plan.replaced(old.doc_id) and old.key not in plan.withdrawn:
            plan.set_action(old.key, "kept", f"its replacement was refused; version {old.version} stays")
        else:
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
    stored_ids: Mapping[str, set[str]],
    early_refused: Mapping[str, ItemError],
) -> None:
    """One batch: its chunks, the records of the documents whose chunks all went in, then the
    chunks those records replace (and the written chunks of refused documents)."""
    report = store.write_chunks(c for _, chunks, _ in batch if isinstance(chunks, list) for c in chunks)
    result.written += report.written
    refused: dict[str, ItemError] = {**early_refused, **{e.id: e for e in report.errors}}
    result.errors.extend(report.errors)
    records: list[DocumentRecord] = []
    stale: list[str] = []
    undo: list[str] = []
    for doc, chunks, old in batch:
        ids = [c.chunk_id for c in chunks]
        errors = [refused[cid] for cid in ids if cid in refused]
        if errors:
            keep = set(old.chunk_ids if old else ()) | stored_ids.get(doc.meta.doc_id, set())
            undo += [cid for cid in ids if cid not in keep]
            plan.held.add(doc.meta.doc_id)
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


def _carry_over(
    old_store: Store, fresh: Store, candidates: list[DocumentRecord], scan: CorpusScan, plan: Plan
) -> list[DocumentRecord]:
    """In a full rebuild, copy into the new store the stored versions this run must keep
    (unreadable, rejected or refused replacements): a rebuild never loses a good version."""
    carried = []
    rejected_sources = frozenset(p.source for p in scan.rejected)
    for old in candidates:
        why = keep_reason(old, scan, plan.held, rejected_sources, plan.replaced)
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
