"""Run and sync: the only place that joins the folder (scan) to a store.

A run scans the corpus (parse + validate, pure), compares every valid document version
with the record the store keeps for it, and writes only the difference. The state to
compare against lives in the store itself (``documents`` records, next to the chunks),
so nothing can drift apart from the index.

Write order per document version, so that a crash anywhere leaves something the next
run's ``repair`` explains: new chunks first (orphans until a record names them), then
the record, then whatever the new state replaces. Before each batch the run records in the
store's meta a journal of the records and chunk IDs it is about to touch, and clears it at the
end: the next run's ``repair`` reads only those, never every chunk of the index.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

from ingest.chunk import ChunkLimitExceeded, chunk_document
from ingest.corpus import Accepted, CorpusError, CorpusScan, Rejected, ScanMemo, read_document, scan_corpus
from ingest.model import Chunk, DocumentMeta, DocumentProblems, DocumentRecord, SourceDocument, UnreadableFile
from ingest.parse import PARSER_VERSION, parse_bytes
from ingest.settings import ChunkSettings, Settings, SettingsError
from ingest.store.base import ItemError, Store

Action = Literal["new", "changed", "moved", "unchanged", "removed", "rejected", "kept"]
ACTIONS: tuple[Action, ...] = ("new", "changed", "moved", "unchanged", "removed", "rejected", "kept")
JOURNAL = "journal"  # meta key: what a run is about to write or delete (JSON), "" when nothing is pending
SCAN_MEMO = "scan_memo"  # meta key: what the last run saw of the folder (see corpus.ScanMemo)


@dataclass(frozen=True)
class WrittenChunk:
    """A chunk already written while the scan parsed its document: only its ID is kept."""

    chunk_id: str


class WrittenChunks:
    """The chunk IDs of a document written as the scan parsed it, packed (10 bytes per 20-hex-char
    ID) so that a run holds no chunk text and little else between parsing and its records."""

    def __init__(self, ids: Iterable[str]) -> None:
        self._ids = tuple(ids)
        self._packed = b""
        if all(len(i) == 20 for i in self._ids):
            try:
                self._packed, self._ids = b"".join(bytes.fromhex(i) for i in self._ids), ()
            except ValueError:
                self._packed = b""

    def __len__(self) -> int:
        return len(self._packed) // 10 if self._packed else len(self._ids)

    def ids(self) -> list[str]:
        if not self._packed:
            return list(self._ids)
        return [self._packed[i : i + 10].hex() for i in range(0, len(self._packed), 10)]

    def __iter__(self) -> Iterator[WrittenChunk]:
        return (WrittenChunk(cid) for cid in self.ids())


# a document, its chunks (still to write, or written during the scan), the stored version it replaces
ToWrite = tuple[SourceDocument, list[Chunk] | WrittenChunks, DocumentRecord | None]


def settings_fingerprint(chunking: ChunkSettings) -> str:
    """What shaped a document's chunks: a change here means its chunks must be rebuilt."""
    return f"{chunking.describe()}|parser:{PARSER_VERSION}"


@dataclass(frozen=True)
class PlannedDocument:
    action: Action
    key: str  # doc_id@version
    source: str
    reason: str = ""
    write: int = 0  # chunks to write
    delete: int = 0  # chunks to delete

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "document": self.key,
            "source": self.source,
            "reason": self.reason,
            "chunks_write": self.write,
            "chunks_delete": self.delete,
        }


@dataclass
class Plan:
    items: list[PlannedDocument] = field(default_factory=list)
    # what executing needs, kept out of the printable plan
    to_write: list[ToWrite] = field(default_factory=list)
    to_remove: list[DocumentRecord] = field(default_factory=list)
    problems: list[DocumentProblems] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)
    # sources of problems that are folders, not documents (not counted as rejected documents)
    folders: frozenset[str] = frozenset()
    # doc_ids whose new version was rejected (by validation, the chunker or the store):
    # none of their stored versions is removed by this run
    held: set[str] = field(default_factory=set)
    present: set[str] = field(default_factory=set)  # doc_id@version of every valid document in the folder
    # versions withdrawn because the folder now limits who may read them or when (see _withdraw)
    withdrawn: set[str] = field(default_factory=set)

    def count(self, action: Action) -> int:
        return sum(1 for item in self.items if item.action == action)

    def set_action(self, key: str, action: Action, reason: str) -> None:
        """Re-mark a planned document once the run knows better (refused, or kept)."""
        for index, item in enumerate(self.items):
            if item.key == key:
                self.items[index] = replace(
                    item, action=action, reason=reason, write=0 if action != "removed" else item.write
                )


def record_for(doc: SourceDocument, chunks: Iterable[Chunk | WrittenChunk], fingerprint: str) -> DocumentRecord:
    meta = doc.meta
    return DocumentRecord(
        doc_id=meta.doc_id,
        version=meta.version,
        title=meta.title,
        source=doc.source,
        source_sha256=doc.sha256,
        format=doc.format,
        access=meta.access,
        status=meta.status,
        effective_from=meta.effective_from.isoformat() if meta.effective_from else None,
        effective_to=meta.effective_to.isoformat() if meta.effective_to else None,
        superseded_by=meta.superseded_by,
        tags=tuple(meta.tags),
        settings_fingerprint=fingerprint,
        chunk_ids=tuple(c.chunk_id for c in chunks),
    )


METADATA_FIELDS = ("title", "access", "status", "effective_from", "effective_to", "superseded_by", "tags")


def _metadata_differs(doc: SourceDocument, old: DocumentRecord) -> list[str]:
    meta = doc.meta
    new = {
        "title": meta.title,
        "access": meta.access,
        "status": meta.status,
        "effective_from": meta.effective_from.isoformat() if meta.effective_from else None,
        "effective_to": meta.effective_to.isoformat() if meta.effective_to else None,
        "superseded_by": meta.superseded_by,
        "tags": tuple(meta.tags),
    }
    return [f for f in METADATA_FIELDS if new[f] != getattr(old, f)]


def parsed_document(doc: SourceDocument, root: Path) -> SourceDocument:
    """The document with its body parsed: a scan may have skipped it (bytes already stored)."""
    if doc.parsed is not None:
        return doc
    data = read_document(Path(root) / doc.source)
    if hashlib.sha256(data).hexdigest() != doc.sha256:
        raise UnreadableFile("the file changed while this run was reading it; run again")
    return replace(doc, parsed=parse_bytes(data, doc.source))


def with_corpus_limits(chunking: ChunkSettings, corpus: ChunkSettings) -> ChunkSettings:
    """The chunk settings with ingest.toml's [chunking] limits wherever the caller left a limit
    at its default (callers build ChunkSettings from --chunker/--size/--overlap alone)."""
    defaults = ChunkSettings()
    changes = {
        name: getattr(corpus, name)
        for name in ("max_chunk_bytes", "max_chunks_per_document")
        if getattr(chunking, name) == getattr(defaults, name)
    }
    return replace(chunking, **changes) if changes else chunking


def plan_sync(
    scan: CorpusScan,
    stored: Iterable[DocumentRecord],
    chunking: ChunkSettings,
    *,
    full: bool = False,
    accept_edits: bool = False,
    early: _EarlyWriter | None = None,
) -> Plan:
    """Compare the folder with the store's records; decides, writes nothing (but deletes again
    the chunks ``early`` wrote during the scan for documents it does not take).

    Only documents that must be written are parsed (if the scan skipped them) and chunked.
    """
    stored_by_key = {} if full else {r.key: r for r in stored}
    plan = Plan(problems=list(scan.problems), folders=frozenset(scan.unreadable_folders))
    # doc_ids with a version in the folder that could not be taken: their stored versions stay
    plan.held = {p.doc_id for p in scan.rejected if p.doc_id}
    for doc in scan.documents:
        _plan_document(plan, doc, stored_by_key.get(doc.meta.key), scan.root, chunking, accept_edits, early)
    if early is not None:
        early.undo_rejected()
    _plan_removals(plan, scan, stored_by_key)
    return plan


def _changes(doc: SourceDocument, old: DocumentRecord, fingerprint: str) -> tuple[Action, list[str]]:
    """What a stored version needs to match the folder's: changed (and why), moved or unchanged."""
    reasons: list[str] = []
    if old.source_sha256 != doc.sha256:
        reasons.append(EDITED)
    if old.settings_fingerprint != fingerprint:
        reasons.append(f"settings changed ({old.settings_fingerprint} → {fingerprint})")
    changed_meta = _metadata_differs(doc, old)
    if changed_meta:
        reasons.append(f"metadata changed ({', '.join(changed_meta)})")
    if reasons:
        return "changed", reasons
    if old.source != doc.source:
        # Same bytes under a new path: chunk IDs stay, their `source` field moves.
        return "moved", [f"moved from {old.source}"]
    return "unchanged", []


EDITED = "content edited without a version bump (--accept-edits)"
# Who may read a version, and when: the stored chunks must never stay readable by other roles or
# on other days than the folder now says, even when its edited content is refused.
VISIBILITY_FIELDS = ("access", "effective_from", "effective_to", "status")


def _withdraw_if_visibility_changed(plan: Plan, doc: SourceDocument, old: DocumentRecord) -> None:
    """The folder's file changed without a version bump (refused) AND now gives other access,
    dates or status: keeping the stored chunks would serve them to readers the folder no longer
    allows (e.g. public → staff). Withdraw the stored version until the document is re-indexed."""
    changed = [f for f in _metadata_differs(doc, old) if f in VISIBILITY_FIELDS]
    if not changed:
        return
    fields = ", ".join(f"{f} {getattr(old, f)!r} → {getattr(record_for(doc, [], ''), f)!r}" for f in changed)
    message = (
        f"{doc.source}: {fields} in the folder: the stored version {old.version} is withdrawn (never kept "
        "readable under its old access or dates); the next run indexes the file as it now is"
    )
    last = plan.problems.pop()  # the refusal just reported for this file: one record, both reasons
    plan.problems.append(replace(last, problems=(*last.problems, message)))
    plan.items.append(PlannedDocument("removed", old.key, old.source, f"withdrawn: {fields}", delete=old.chunk_count))
    plan.to_remove.append(old)
    plan.withdrawn.add(old.key)


def _plan_document(
    plan: Plan,
    doc: SourceDocument,
    old: DocumentRecord | None,
    root: Path,
    chunking: ChunkSettings,
    edits: bool,
    early: _EarlyWriter | None = None,
) -> None:
    """One valid document of the folder: unchanged, or chunked (unless ``early`` already did,
    as the scan parsed it) and planned for writing."""
    key = doc.meta.key
    plan.present.add(key)
    if old is not None and old.source_sha256 != doc.sha256 and not edits:
        plan.problems.append(
            DocumentProblems(
                doc.source,
                doc.meta.doc_id,
                (
                    f"{doc.source}: version: content changed but version {doc.meta.version!r} did not "
                    f"(store holds sha256 {old.source_sha256[:12]}…, file has {doc.sha256[:12]}…); "
                    "bump the version, or pass --accept-edits to replace it deliberately",
                ),
            )
        )
        plan.items.append(PlannedDocument("rejected", key, doc.source, "content changed, version did not"))
        _withdraw_if_visibility_changed(plan, doc, old)
        return
    action, reasons = ("new", []) if old is None else _changes(doc, old, settings_fingerprint(chunking))
    if action == "unchanged":
        plan.items.append(PlannedDocument("unchanged", key, doc.source))
        return
    if EDITED in reasons:
        plan.overrides.append(f"{doc.source}: {key} replaced in place (--accept-edits)")
    try:
        chunks: list[Chunk] | WrittenChunks
        if early is not None and doc.source in early.chunked:
            chunks = early.take(doc.source)
        else:
            chunks = chunk_document(parsed_document(doc, root), chunking)
    except (OSError, UnreadableFile) as exc:
        plan.problems.append(DocumentProblems(doc.source, doc.meta.doc_id, (f"{doc.source}: unreadable file: {exc}",)))
        plan.items.append(PlannedDocument("rejected", key, doc.source, str(exc)))
        plan.held.add(doc.meta.doc_id)
        return
    except ChunkLimitExceeded as exc:
        # Refused before any write, the same way for every store; the stored version stays.
        plan.problems.append(DocumentProblems(doc.source, doc.meta.doc_id, (f"{doc.source}: {exc}",)))
        plan.items.append(PlannedDocument("rejected", key, doc.source, str(exc)))
        plan.held.add(doc.meta.doc_id)
        return
    stale = len(set(old.chunk_ids) - {c.chunk_id for c in chunks}) if old else 0
    plan.items.append(PlannedDocument(action, key, doc.source, "; ".join(reasons), len(chunks), stale))
    plan.to_write.append((doc, chunks, old))


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
        self._batch: list[tuple[SourceDocument, list[Chunk]]] = []
        self._size = 0

    def __call__(self, accepted: Accepted) -> Accepted:
        doc = accepted.document
        if doc.parsed is None:
            return accepted
        light = Accepted(accepted.source, replace(doc, parsed=None), accepted.defaulted)
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
            self._batch.append((light.document, chunks))
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


class _Journal:
    """The run's journal: every doc_id@version it is about to write or delete, recorded in the
    store before the write (cumulative over the run; cleared at its end)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.keys: set[str] = set()

    def add(self, keys: Iterable[str]) -> None:
        new = set(keys) - self.keys
        if new:
            self.keys |= new
            write_journal(self.store, self.keys)


def _plan_removals(plan: Plan, scan: CorpusScan, stored_by_key: Mapping[str, DocumentRecord]) -> None:
    """Stored versions the folder no longer has: removed, unless they must be kept."""
    rejected_sources = frozenset(p.source for p in scan.rejected)
    versions_present: dict[str, list[str]] = {}
    for doc in scan.documents:
        versions_present.setdefault(doc.meta.doc_id, []).append(doc.meta.version)
    for key, old in sorted(stored_by_key.items()):
        if key in plan.present:
            continue
        why = keep_reason(old, scan, plan.held, rejected_sources)
        if why:
            # What cannot be read or was rejected is a problem (exit 1), never a deletion.
            plan.items.append(PlannedDocument("kept", key, old.source, why))
            continue
        others = versions_present.get(old.doc_id)
        reason = f"version {old.version} no longer in the folder" + (
            f" (it has {', '.join(sorted(others))})" if others else ""
        )
        plan.items.append(PlannedDocument("removed", key, old.source, reason, delete=old.chunk_count))
        plan.to_remove.append(old)


def keep_reason(
    old: DocumentRecord, scan: CorpusScan, held: set[str], rejected_sources: frozenset[str] | None = None
) -> str | None:
    """Why a stored version that is not in the folder's valid documents must stay, or None.

    Its file is still there but rejected or unreadable; it lies under a folder that could
    not be read; or a new version of its doc_id was rejected: the last good version of a
    document is never deleted before a replacement is in.
    """
    if rejected_sources is None:
        rejected_sources = frozenset(p.source for p in scan.rejected)
    if old.source in rejected_sources:
        return f"{old.source} was rejected this time; the stored version is kept"
    for folder in scan.unreadable_folders:
        if old.source.startswith(folder.rstrip("/") + "/"):
            return f"{folder} could not be read; the stored version is kept"
    if old.doc_id in held:
        return f"a new version of {old.doc_id} was rejected; the stored version {old.version} is kept"
    return None


@dataclass
class RunResult:
    store: str
    plan: Plan
    seen: int
    written: int = 0
    deleted: int = 0
    total: int = 0
    repaired: dict[str, int] = field(default_factory=dict)
    errors: list[ItemError] = field(default_factory=list)
    defaulted_access: int = 0
    elapsed_s: float = 0.0
    dry_run: bool = False
    access_changes: list[str] = field(default_factory=list)  # aliases re-pointed to follow [roles]
    warnings: list[str] = field(default_factory=list)  # problems after the writes; counts stay true

    @property
    def ok(self) -> bool:
        return not self.plan.problems and not self.errors

    def to_json(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "store": self.store,
            "dry_run": self.dry_run,
            "documents": {
                "seen": self.seen,
                "indexed": plan.count("new") + plan.count("changed") + plan.count("moved"),
                "new": plan.count("new"),
                "changed": plan.count("changed"),
                "moved": plan.count("moved"),
                "unchanged": plan.count("unchanged"),
                # problem records of documents (not the one of inventory.yaml itself)
                "rejected": sum(
                    1 for p in plan.problems if p.source.startswith("documents/") and p.source not in plan.folders
                ),
                "removed": plan.count("removed"),
                "defaulted_access": self.defaulted_access,
            },
            "chunks": {"written": self.written, "deleted": self.deleted, "total": self.total},
            "problems": [p.to_json() for p in plan.problems],
            "errors": [{"id": e.id, "reason": e.reason} for e in self.errors],
            "overrides": list(plan.overrides),
            "repaired": self.repaired,
            "access_repaired": self.access_changes,
            "warnings": self.warnings,
            "plan": [item.to_json() for item in plan.items if item.action != "unchanged"],
            "elapsed_s": round(self.elapsed_s, 3),
        }


def write_journal(store: Store, keys: Iterable[str]) -> None:
    """Record, before writing, every document version (doc_id@version) whose chunks or record the
    run's next writes touch: all a killed run can leave half done, since every chunk it writes or
    deletes belongs to one of them. The entry grows over the run and is cleared at its end."""
    pairs = sorted(tuple(key.rsplit("@", 1)) for key in set(keys))
    store.set_meta({JOURNAL: json.dumps(pairs, separators=(",", ":"))})


def read_journal(meta: Mapping[str, str]) -> set[tuple[str, str]] | None:
    """(doc_id, version) pairs a killed run may have left half done; None when the store predates
    the journal (or its entry is unreadable): then repair checks everything once."""
    raw = meta.get(JOURNAL)
    if raw is None:
        return None
    if not raw:
        return set()
    try:
        return {(str(doc_id), str(version)) for doc_id, version in json.loads(raw)}
    except (ValueError, TypeError):
        return None


def repair(
    store: Store, records: list[DocumentRecord] | None = None, meta: Mapping[str, str] | None = None
) -> dict[str, int]:
    """Finish or roll back what a killed run left: only complete document versions survive.

    A chunk that no record lists is an orphan of an interrupted write: deleted. A record
    whose chunks are not all there is dropped, so this run writes that version again. Only
    the versions the journal names are read; every chunk key only when the store has no journal.
    """
    records = store.documents() if records is None else records
    journal = read_journal(store.get_meta() if meta is None else meta)
    if journal is None:
        return _repair_everything(store, records)
    by_version = {(r.doc_id, r.version): r for r in records}
    broken: list[DocumentRecord] = []
    orphans: list[str] = []
    for doc_id, version in sorted(journal):
        present = {c.chunk_id for c in store.document_chunks(doc_id, version)}
        record = by_version.get((doc_id, version))
        if record is not None and not set(record.chunk_ids) <= present:
            broken.append(record)
            record = None
        orphans += sorted(present - set(record.chunk_ids if record else ()))
    if broken:
        store.delete_documents([r.key for r in broken])
    deleted = store.delete_chunks(orphans) if orphans else 0
    return {"orphan_chunks": deleted, "incomplete_documents": len(broken)}


def _repair_everything(store: Store, records: list[DocumentRecord]) -> dict[str, int]:
    """Repair of a store written before the journal existed: every chunk key is read, once."""
    keys = store.chunk_keys()
    present = {cid for cid, _, _ in keys}
    broken = [r for r in records if not set(r.chunk_ids) <= present]
    if broken:
        store.delete_documents([r.key for r in broken])
    listed = {cid for r in records if r not in broken for cid in r.chunk_ids}
    orphans = [cid for cid in present if cid not in listed]
    deleted = store.delete_chunks(orphans) if orphans else 0
    return {"orphan_chunks": deleted, "incomplete_documents": len(broken)}


def _owner() -> str:
    return (
        f"ingest run pid {os.getpid()} on {socket.gethostname()} at {datetime.now(UTC).isoformat(timespec='seconds')}"
    )


DEFAULT_WRITE_BATCH_CHUNKS = 2000  # chunks per write batch: a few bulk requests, bounded memory


def _batches(plan: Plan, batch_chunks: int) -> Iterable[list[ToWrite]]:
    batch: list[ToWrite] = []
    size = 0
    for item in plan.to_write:
        batch.append(item)
        size += len(item[1])
        if size >= batch_chunks:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _refusal(doc: SourceDocument, errors: list[ItemError], old: DocumentRecord | None) -> DocumentProblems:
    first = errors[0]
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
    for batch in _batches(plan, batch_chunks):
        if journal is not None:
            journal.add(doc.meta.key for doc, _, _ in batch)
        _write_batch(store, plan, batch, fingerprint, result, stored_ids, refused or {})
        tick(len(batch))
    removals = []
    for old in plan.to_remove:
        if old.doc_id in plan.held and old.key not in plan.withdrawn:
            plan.set_action(old.key, "kept", f"its replacement was refused; version {old.version} stays")
        else:
            removals.append(old)
    for group in _record_batches(removals, batch_chunks):
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


def _record_batches(records: list[DocumentRecord], batch_chunks: int) -> Iterable[list[DocumentRecord]]:
    """Records in groups of about ``batch_chunks`` chunks (at least one record per group)."""
    group: list[DocumentRecord] = []
    size = 0
    for record in records:
        group.append(record)
        size += record.chunk_count
        if size >= batch_chunks:
            yield group
            group, size = [], 0
    if group:
        yield group


def run(
    corpus: Path,
    store: Store,
    settings: Settings,
    chunking: ChunkSettings,
    *,
    full: bool = False,
    dry_run: bool = False,
    accept_edits: bool = False,
    lock_wait_s: float = 0.0,
    allow_empty: bool = False,
    on_file: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
    write_batch_chunks: int | None = None,
    workers: int | None = None,
) -> RunResult:
    """Validate, chunk and write a corpus to a store; incremental unless ``full``.

    ``write_batch_chunks``: chunks per write batch (None: INGEST_WRITE_BATCH_CHUNKS, else 2000);
    ``workers``: parser processes (None: one per core, at most 8). The CLI passes both.
    """
    started = time.perf_counter()
    chunking = with_corpus_limits(chunking, settings.chunking)
    batch_chunks = DEFAULT_WRITE_BATCH_CHUNKS if write_batch_chunks is None else write_batch_chunks
    if batch_chunks < 1:
        raise SettingsError(f"write batch size must be ≥ 1 chunk; found {batch_chunks}")
    store.check()  # unreachable → StoreUnavailable before anything is read or written
    # Access follows [roles] on every run, before anything else (a dry run only reports).
    access_changes = store.reconcile_access(settings.roles, check=dry_run, full=full)
    job = _Job(corpus, settings, chunking, full, accept_edits, allow_empty, on_file, progress, batch_chunks, workers)
    if dry_run:
        result = _dry_run(store, job)
    else:
        # Everything is read under the lock: a run never plans against a store another run replaced.
        with store.lock(_owner(), wait_s=lock_wait_s):
            result = _locked_run(store, job)
    result.access_changes = access_changes
    result.warnings = list(getattr(store, "warnings", []))  # e.g. the lock release failed after the writes
    result.elapsed_s = time.perf_counter() - started
    return result


@dataclass(frozen=True)
class _Job:
    """What one run was asked to do."""

    corpus: Path
    settings: Settings
    chunking: ChunkSettings
    full: bool
    accept_edits: bool
    allow_empty: bool
    on_file: Callable[[str], None] | None
    progress: Callable[[int, int], None] | None
    batch_chunks: int
    workers: int | None


def _scan(
    job: _Job, stored: list[DocumentRecord], meta: Mapping[str, str], full: bool, early: _EarlyWriter | None = None
) -> CorpusScan:
    """The folder, reading as little as the store allows: files it holds with the same bytes,
    path, inventory and settings are only hashed; other stored bytes are not parsed. ``early``
    chunks and writes the others as they are parsed."""
    known = set() if full else {r.source_sha256 for r in stored}
    memo = None if full else scan_memo(meta, stored)
    scan = scan_corpus(
        job.corpus,
        job.settings,
        on_file=job.on_file,
        skip_body=known,
        workers=job.workers,
        memo=memo,
        on_accepted=early,
    )
    if scan.seen == 0 and stored and not job.allow_empty and not scan.unreadable_folders:
        # An unmounted volume or a wrong path looks exactly like "everything was deleted".
        raise CorpusError(
            f"{Path(job.corpus) / 'documents'} holds no documents but the store holds {len(stored)}; "
            "refusing to delete them all (wrong folder?). Pass --allow-empty to remove them."
        )
    if early is not None:
        early.flush()
    return scan


def _dry_run(store: Store, job: _Job) -> RunResult:
    stored = store.documents()
    meta = store.get_meta()
    rebuild_reason = analysis_change(store, stored, meta)
    full = job.full or bool(rebuild_reason)
    early = _EarlyWriter(None, {} if full else {r.key: r for r in stored}, job.chunking, 1, None)
    scan = _scan(job, stored, meta, full, early)
    plan = plan_sync(scan, stored, job.chunking, full=full, accept_edits=job.accept_edits, early=early)
    _give_reason(plan, rebuild_reason)
    result = RunResult(store.name, plan, scan.seen, dry_run=True, defaulted_access=scan.defaulted_access)
    result.written = sum(i.write for i in plan.items)
    result.deleted = sum(i.delete for i in plan.items)
    # Rewritten IDs (moves, metadata changes) replace themselves: only new IDs add up.
    added = sum(
        len({c.chunk_id for c in chunks} - set(old.chunk_ids if old else ())) for _, chunks, old in plan.to_write
    )
    result.total = result.written if full else sum(r.chunk_count for r in stored) - result.deleted + added
    return result


def _locked_run(store: Store, job: _Job) -> RunResult:
    """The run proper, under the store's write lock: repair, scan (chunks written as documents
    are parsed), plan, records and deletions, then what the store records about the run."""
    meta = store.get_meta()
    stored = store.documents()
    rebuild_reason = analysis_change(store, stored, meta)
    if job.full or rebuild_reason:  # an index's analysis is fixed when it is created
        result, scan = _full_run(store, job, stored, meta, rebuild_reason)
    else:
        repaired = repair(store, stored, meta)
        if any(repaired.values()):
            stored = store.documents()
        journal = _Journal(store)
        stored_by_key = {r.key: r for r in stored}
        early = _EarlyWriter(store, stored_by_key, job.chunking, job.batch_chunks, journal)
        scan = _scan(job, stored, meta, False, early)
        plan = plan_sync(scan, stored, job.chunking, accept_edits=job.accept_edits, early=early)
        result = RunResult(store.name, plan, scan.seen, repaired=repaired, defaulted_access=scan.defaulted_access)
        result.written, result.errors = early.written, list(early.errors)
        steps = len(plan.to_write) + len(plan.to_remove)
        fingerprint = settings_fingerprint(job.chunking)
        tick = _ticker(job.progress, steps)
        _write_plan(store, plan, fingerprint, result, tick, job.batch_chunks, journal=journal, refused=early.refused)
        if steps or any(repaired.values()) or journal.keys:
            store.refresh()
        result.total = _total_after(stored, plan)
    updates = {**_meta(job.settings, job.chunking, store.analysis), JOURNAL: "", SCAN_MEMO: _memo_json(scan, result)}
    current = store.get_meta() if job.full or rebuild_reason else meta
    if any(current.get(k) != v for k, v in updates.items() if k != "built_at"):
        store.set_meta(updates)
    return result


def _total_after(stored: list[DocumentRecord], plan: Plan) -> int:
    """Chunks in the store after the plan: the records' chunk counts (no count request needed)."""
    live = {r.key: r.chunk_count for r in stored}
    for item in plan.items:
        if item.action in ("new", "changed", "moved"):
            live[item.key] = item.write
        elif item.action == "removed":
            live.pop(item.key, None)
    return sum(live.values())


def _full_run(
    store: Store, job: _Job, stored: list[DocumentRecord], meta: Mapping[str, str], rebuild_reason: str
) -> tuple[RunResult, CorpusScan]:
    """A rebuild into a fresh store swapped in at the end; the stored versions it must keep are carried."""
    old_keys = {r.key: r for r in stored}
    fingerprint = settings_fingerprint(job.chunking)
    with store.full_rebuild() as fresh:
        early = _EarlyWriter(fresh, {}, job.chunking, job.batch_chunks, None)
        scan = _scan(job, stored, meta, True, early)
        plan = plan_sync(scan, [], job.chunking, full=True, early=early)
        _give_reason(plan, rebuild_reason)
        result = RunResult(store.name, plan, scan.seen, defaulted_access=scan.defaulted_access)
        result.written, result.errors = early.written, list(early.errors)
        tick = _ticker(job.progress, len(plan.to_write))
        _write_plan(fresh, plan, fingerprint, result, tick, job.batch_chunks, refused=early.refused)
        rebuilt = {i.key for i in plan.items if i.action in ("new", "changed", "moved")}
        carried = _carry_over(store, fresh, [old for key, old in old_keys.items() if key not in rebuilt], scan, plan)
        fresh.set_meta(_meta(job.settings, job.chunking, store.analysis))
    new_ids = {c.chunk_id for doc, chunks, _ in plan.to_write if doc.meta.key in rebuilt for c in chunks}
    new_ids.update(cid for old in carried for cid in old.chunk_ids)
    result.deleted = sum(1 for old in old_keys.values() for cid in old.chunk_ids if cid not in new_ids)
    for key, old in old_keys.items():
        if key not in rebuilt and old not in carried:
            plan.items.append(
                PlannedDocument("removed", key, old.source, "not in the rebuilt index", delete=old.chunk_count)
            )
    result.total = store.counts()["totals"]["chunks"]
    return result, scan


def scan_memo(meta: Mapping[str, str], stored: list[DocumentRecord]) -> ScanMemo | None:
    """What the last run recorded about the folder, with the stored records' metadata."""
    try:
        memo = json.loads(meta.get(SCAN_MEMO) or "null")
        if not isinstance(memo, dict):
            return None
        known = {(r.source, r.source_sha256): _meta_of(r) for r in stored}
        rejected = {
            (str(source), str(sha)): Rejected(
                str(source), DocumentProblems(str(source), doc_id, tuple(problems)), key, str(sha)
            )
            for source, sha, doc_id, key, problems in memo.get("rejected", [])
        }
        return ScanMemo(
            str(memo["fingerprint"]),
            str(memo["listing"]),
            known,
            frozenset(memo["defaulted"]),
            frozenset(memo["problems"]),
            rejected,
        )
    except (ValueError, KeyError, TypeError):
        return None  # unreadable: every file is read as before


def _meta_of(record: DocumentRecord) -> DocumentMeta:
    return DocumentMeta(
        doc_id=record.doc_id,
        version=record.version,
        title=record.title,
        access=record.access,
        effective_from=date.fromisoformat(record.effective_from) if record.effective_from else None,
        effective_to=date.fromisoformat(record.effective_to) if record.effective_to else None,
        status=record.status,
        superseded_by=record.superseded_by,
        tags=tuple(record.tags),
    )


def _memo_json(scan: CorpusScan, result: RunResult) -> str:
    problems = sorted({p.source for p in result.plan.problems})
    return json.dumps(
        {
            "fingerprint": scan.fingerprint,
            "listing": scan.listing,
            "defaulted": list(scan.defaulted_sources),
            "problems": problems,
            "rejected": [
                [r.source, r.sha256, r.problems.doc_id, r.key, list(r.problems.problems)] for r in scan.rejected_files
            ],
        },
        separators=(",", ":"),
    )


def _carry_over(
    old_store: Store, fresh: Store, candidates: list[DocumentRecord], scan: CorpusScan, plan: Plan
) -> list[DocumentRecord]:
    """In a full rebuild, copy into the new store the stored versions this run must keep
    (unreadable, rejected or refused replacements): a rebuild never loses a good version."""
    carried = []
    rejected_sources = frozenset(p.source for p in scan.rejected)
    for old in candidates:
        why = keep_reason(old, scan, plan.held, rejected_sources)
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


def analysis_change(store: Store, stored: list[DocumentRecord], meta: Mapping[str, str] | None = None) -> str:
    """Why the store must be rebuilt for its search analysis ([search] language), or ""."""
    meta = store.get_meta() if meta is None else meta
    recorded = meta.get("analysis")
    if (not meta and not stored) or recorded == store.analysis:
        return ""
    if recorded is None:
        return f"search analysis not recorded (built by an older ingest); rebuilding with {store.analysis}"
    return f"search analysis changed ({recorded} → {store.analysis})"


def _give_reason(plan: Plan, reason: str) -> None:
    if reason:
        plan.items = [replace(item, reason=item.reason or reason) for item in plan.items]


def _meta(settings: Settings, chunking: ChunkSettings, analysis: str) -> dict[str, str]:
    """What the store records about how it was built (and the roles `search` reads back)."""
    return {
        "analysis": analysis,
        "chunker": chunking.chunker,
        "size": str(chunking.size),
        "overlap": str(chunking.overlap),
        "parser_version": PARSER_VERSION,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "labels": json.dumps(list(settings.labels)),
        "roles": json.dumps({r: list(ls) for r, ls in settings.roles.items()}),
    }


def roles_from_meta(meta: dict[str, str], fallback: Settings) -> dict[str, tuple[str, ...]]:
    """The roles the index was built with (so `search` needs no corpus), else the defaults."""
    if "roles" in meta:
        return {r: tuple(ls) for r, ls in json.loads(meta["roles"]).items()}
    return dict(fallback.roles)


# --- verify ------------------------------------------------------------------


@dataclass
class VerifyResult:
    chunks: int
    untraceable: list[str]
    missing_in_store: list[str]
    stale_in_store: list[str]
    orphan_chunks: list[str]
    incomplete_documents: list[str]
    problems: list[DocumentProblems]
    edited_in_folder: list[str] = field(default_factory=list)  # bytes differ from the stored version
    # "doc@version: field (store …, folder …)": the store's record or chunks say other metadata
    # (access, dates, status, title, superseded_by, tags) than the folder
    metadata_mismatch: list[str] = field(default_factory=list)
    # role aliases that do not match [roles], foreign indices in them, mappings changed by hand
    access_layout: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.untraceable
            or self.missing_in_store
            or self.stale_in_store
            or self.orphan_chunks
            or self.incomplete_documents
            or self.metadata_mismatch
            or self.access_layout
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "chunks": self.chunks,
            "untraceable": self.untraceable,
            "missing_in_store": self.missing_in_store,
            "stale_in_store": self.stale_in_store,
            "orphan_chunks": self.orphan_chunks,
            "incomplete_documents": self.incomplete_documents,
            "edited_in_folder": self.edited_in_folder,
            "metadata_mismatch": self.metadata_mismatch,
            "access_layout": self.access_layout,
            "rejected": [p.to_json() for p in self.problems],
        }


class _Mismatches:
    """Stored metadata (records and chunks) that differs from what the folder says."""

    def __init__(self, expected: Mapping[str, DocumentRecord]) -> None:
        self.expected = expected  # as stored values (record_for's form)
        self.found: dict[str, dict[str, tuple[object, object]]] = {}

    def compare(self, key: str, stored: object) -> None:
        want = self.expected.get(key)
        if want is None:
            return
        for name in METADATA_FIELDS:
            have = tuple(getattr(stored, name)) if name == "tags" else getattr(stored, name)
            should = tuple(getattr(want, name)) if name == "tags" else getattr(want, name)
            if have != should:
                self.found.setdefault(key, {}).setdefault(name, (have, should))

    def lines(self) -> list[str]:
        return [
            f"{key}: "
            + "; ".join(
                f"{name} (store {have!r}, folder {should!r})" for name, (have, should) in sorted(fields.items())
            )
            for key, fields in sorted(self.found.items())
        ]


def verify(
    corpus: Path, store: Store, settings: Settings, on_file: Callable[[str], None] | None = None
) -> VerifyResult:
    """Re-parse every source; every stored chunk must equal its characters; folder and store agree."""
    store.check()
    access_layout = store.reconcile_access(settings.roles, check=True)  # reports, changes nothing
    scan = scan_corpus(corpus, settings, on_file=on_file)
    texts = {doc.meta.key: doc.parsed.text for doc in scan.documents if doc.parsed is not None}
    records = {r.key: r for r in store.documents()}
    # A file edited without a version bump was refused by `run`; its stored chunks still
    # cite the bytes the store indexed, so they are reported as such, not as untraceable.
    edited = sorted(
        d.meta.key for d in scan.documents if d.meta.key in records and records[d.meta.key].source_sha256 != d.sha256
    )
    listed = {cid for r in records.values() for cid in r.chunk_ids}
    mismatches = _Mismatches({doc.meta.key: record_for(doc, [], "") for doc in scan.documents})
    for key, record in records.items():
        mismatches.compare(key, record)
    untraceable, orphans, count = [], [], 0
    present: set[str] = set()
    for chunk in store.iter_chunks():
        count += 1
        present.add(chunk.chunk_id)
        key = f"{chunk.doc_id}@{chunk.version}"
        mismatches.compare(key, chunk)
        text = texts.get(key)
        if key in edited:
            pass
        elif text is None or text[chunk.start : chunk.end] != chunk.text:
            untraceable.append(chunk.chunk_id)
        if chunk.chunk_id not in listed:
            orphans.append(chunk.chunk_id)
    incomplete = sorted(k for k, r in records.items() if not set(r.chunk_ids) <= present)
    missing = sorted(doc.source for doc in scan.documents if doc.meta.key not in records)
    stale = sorted(k for k in records if k not in texts)
    return VerifyResult(
        count,
        sorted(untraceable),
        missing,
        stale,
        sorted(orphans),
        incomplete,
        list(scan.problems),
        edited,
        mismatches.lines(),
        access_layout,
    )


def parse_as_of(value: str | None) -> date | None:
    if value is None:
        return date.today()
    if value.lower() in ("any", "all", "none"):
        return None
    return date.fromisoformat(value)
