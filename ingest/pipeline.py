"""Run and sync: the only place that joins the folder (scan) to a store.

A run scans the corpus (parse + validate, pure), compares every valid document version
with the record the store keeps for it, and writes only the difference. The state to
compare against lives in the store itself (``documents`` records, next to the chunks),
so nothing can drift apart from the index.

Write order per document version, so that a crash anywhere leaves something the next
run's ``repair`` explains: new chunks first (orphans until a record names them), then
the record, then whatever the new state replaces.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

from ingest.chunk import chunk_document
from ingest.corpus import CorpusError, CorpusScan, scan_corpus
from ingest.model import Chunk, DocumentProblems, DocumentRecord, SourceDocument, UnreadableFile
from ingest.parse import PARSER_VERSION, parse_bytes
from ingest.settings import ChunkSettings, Settings
from ingest.store.base import ItemError, Store

ACTIONS = ("new", "changed", "moved", "unchanged", "removed", "rejected")


def settings_fingerprint(chunking: ChunkSettings) -> str:
    """What shaped a document's chunks: a change here means its chunks must be rebuilt."""
    return f"{chunking.describe()}|parser:{PARSER_VERSION}"


@dataclass(frozen=True)
class PlannedDocument:
    action: str  # one of ACTIONS
    key: str  # doc_id@version
    source: str
    reason: str = ""
    write: int = 0  # chunks to write
    delete: int = 0  # chunks to delete

    def to_json(self) -> dict:
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
    to_write: list[tuple[SourceDocument, list[Chunk], DocumentRecord | None]] = field(default_factory=list)
    to_remove: list[DocumentRecord] = field(default_factory=list)
    problems: list[DocumentProblems] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)

    def count(self, action: str) -> int:
        return sum(1 for item in self.items if item.action == action)


def record_for(doc: SourceDocument, chunks: list[Chunk], fingerprint: str) -> DocumentRecord:
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
    new = record_for(doc, [], old.settings_fingerprint)
    return [f for f in METADATA_FIELDS if getattr(new, f) != getattr(old, f)]


def parsed_document(doc: SourceDocument, root: Path) -> SourceDocument:
    """The document with its body parsed: a scan may have skipped it (bytes already stored)."""
    if doc.parsed is not None:
        return doc
    data = (Path(root) / doc.source).read_bytes()
    if hashlib.sha256(data).hexdigest() != doc.sha256:
        raise UnreadableFile("the file changed while this run was reading it; run again")
    return replace(doc, parsed=parse_bytes(data, doc.source))


def plan_sync(
    scan: CorpusScan,
    stored: Iterable[DocumentRecord],
    chunking: ChunkSettings,
    *,
    full: bool = False,
    accept_edits: bool = False,
) -> Plan:
    """Compare the folder with the store's records; decides, writes nothing.

    Only documents that must be written are parsed (if the scan skipped them) and chunked.
    """
    fingerprint = settings_fingerprint(chunking)
    stored_by_key = {} if full else {r.key: r for r in stored}
    plan = Plan(problems=list(scan.problems))
    rejected_sources = {p.source for p in scan.rejected}
    present: set[str] = set()
    for doc in scan.documents:
        key = doc.meta.key
        present.add(key)
        old = stored_by_key.get(key)
        if old is not None and old.source_sha256 != doc.sha256 and not accept_edits:
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
            continue
        reasons: list[str] = []
        action = "new"
        if old is not None:
            if old.source_sha256 != doc.sha256:
                reasons.append("content edited without a version bump (--accept-edits)")
                plan.overrides.append(f"{doc.source}: {key} replaced in place (--accept-edits)")
            if old.settings_fingerprint != fingerprint:
                reasons.append(f"settings changed ({old.settings_fingerprint} → {fingerprint})")
            changed_meta = _metadata_differs(doc, old)
            if changed_meta:
                reasons.append(f"metadata changed ({', '.join(changed_meta)})")
            if reasons:
                action = "changed"
            elif old.source != doc.source:
                # Same bytes under a new path: chunk IDs stay, their `source` field moves.
                action, reasons = "moved", [f"moved from {old.source}"]
            else:
                plan.items.append(PlannedDocument("unchanged", key, doc.source))
                continue
        try:
            doc = parsed_document(doc, scan.root)
        except (OSError, UnreadableFile) as exc:
            plan.problems.append(DocumentProblems(doc.source, doc.meta.doc_id, (f"{doc.source}: unreadable file: {exc}",)))
            plan.items.append(PlannedDocument("rejected", key, doc.source, str(exc)))
            continue
        chunks = chunk_document(doc, chunking)
        stale = len(set(old.chunk_ids) - {c.chunk_id for c in chunks}) if old else 0
        plan.items.append(PlannedDocument(action, key, doc.source, "; ".join(reasons), len(chunks), stale))
        plan.to_write.append((doc, chunks, old))
    versions_present: dict[str, list[str]] = {}
    for doc in scan.documents:
        versions_present.setdefault(doc.meta.doc_id, []).append(doc.meta.version)
    for key, old in sorted(stored_by_key.items()):
        if key in present:
            continue
        if old.source in rejected_sources:
            # The file is still there but rejected this time: keep what the store holds
            # rather than drop a document over a metadata typo; the run exits 1.
            continue
        others = versions_present.get(old.doc_id)
        reason = f"version {old.version} no longer in the folder" + (f" (it has {', '.join(sorted(others))})" if others else "")
        plan.items.append(PlannedDocument("removed", key, old.source, reason, delete=old.chunk_count))
        plan.to_remove.append(old)
    return plan


@dataclass
class RunResult:
    store: str
    plan: Plan
    seen: int
    written: int = 0
    deleted: int = 0
    total: int = 0
    repaired: dict = field(default_factory=dict)
    errors: list[ItemError] = field(default_factory=list)
    defaulted_access: int = 0
    elapsed_s: float = 0.0
    dry_run: bool = False
    access_changes: list[str] = field(default_factory=list)  # aliases re-pointed to follow [roles]
    warnings: list[str] = field(default_factory=list)  # problems after the writes; counts stay true

    @property
    def ok(self) -> bool:
        return not self.plan.problems and not self.errors

    def to_json(self) -> dict:
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
                "rejected": sum(1 for p in plan.problems if p.source.startswith("documents/")),
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


def repair(store: Store) -> dict[str, int]:
    """Finish or roll back what a killed run left: only complete document versions survive.

    A chunk that no record lists is an orphan of an interrupted write: deleted. A record
    whose chunks are not all there is dropped, so this run writes that version again.
    """
    records = store.documents()
    keys = store.chunk_keys()
    present = {cid for cid, _, _ in keys}
    broken = [r for r in records if not set(r.chunk_ids) <= present]
    if broken:
        store.delete_documents([r.key for r in broken])
    listed = {cid for r in records if r not in broken for cid in r.chunk_ids}
    orphans = [cid for cid in present if cid not in listed]
    deleted = store.delete_chunks(orphans) if orphans else 0
    if broken or orphans:
        store.refresh()
    return {"orphan_chunks": deleted, "incomplete_documents": len(broken)}


def _owner() -> str:
    return f"ingest run pid {os.getpid()} on {socket.gethostname()} at {datetime.now(timezone.utc).isoformat(timespec='seconds')}"


_writes_left = int(os.environ.get("INGEST_CRASH_AFTER_WRITES", "0") or 0)


def _crash_point() -> None:
    """Fault injection for the crash tests: SIGKILL ourselves after N store writes.

    Set only by tests (INGEST_CRASH_AFTER_WRITES=N); a no-op otherwise.
    """
    global _writes_left
    if _writes_left > 0:
        _writes_left -= 1
        if _writes_left == 0:
            os.kill(os.getpid(), 9)


# Chunks per write batch: a few bulk requests, bounded memory. Tests make it small to get
# many crash points in a small corpus.
BATCH_CHUNKS = int(os.environ.get("INGEST_WRITE_BATCH_CHUNKS", "2000") or 2000)


def _batches(plan: Plan) -> Iterable[list[tuple[SourceDocument, list[Chunk], DocumentRecord | None]]]:
    batch: list = []
    size = 0
    for item in plan.to_write:
        batch.append(item)
        size += len(item[1])
        if size >= BATCH_CHUNKS:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _write_plan(store: Store, plan: Plan, fingerprint: str, result: RunResult, tick: Callable[[int], None]) -> None:
    """Apply a plan batch by batch: chunks, then records, then what they replace.

    A document with a refused chunk gets no record: it stays absent (or as it was), never
    half-live; its written chunks are removed again.
    """
    for batch in _batches(plan):
        report = store.write_chunks(c for _, chunks, _ in batch for c in chunks)
        _crash_point()
        result.written += report.written
        refused = {e.id for e in report.errors}
        result.errors.extend(report.errors)
        records, stale, undo = [], [], []
        for doc, chunks, old in batch:
            ids = [c.chunk_id for c in chunks]
            if refused.intersection(ids):
                undo += [cid for cid in ids if old is None or cid not in old.chunk_ids]
                continue
            records.append(record_for(doc, chunks, fingerprint))
            if old is not None:
                stale += sorted(set(old.chunk_ids) - set(ids))
        if undo:
            store.delete_chunks(undo)
        store.put_documents(records)
        _crash_point()
        if stale:
            result.deleted += store.delete_chunks(stale)
            _crash_point()
        tick(len(batch))
    if plan.to_remove:
        store.delete_documents([old.key for old in plan.to_remove])
        _crash_point()
        result.deleted += store.delete_chunks([cid for old in plan.to_remove for cid in old.chunk_ids])
        _crash_point()
        tick(len(plan.to_remove))


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
) -> RunResult:
    """Validate, chunk and write a corpus to a store; incremental unless ``full``."""
    started = time.perf_counter()
    store.check()  # unreachable → StoreUnavailable before anything is read or written
    # Access follows [roles] on every run, before anything else (a dry run only reports).
    access_changes = store.reconcile_access(settings.roles, check=dry_run, full=full)
    stored = store.documents()
    # Bytes the store already holds parsed fine before: read only their metadata now.
    known = set() if full else {r.source_sha256 for r in stored}
    scan = scan_corpus(corpus, settings, on_file=on_file, skip_body=known)
    if scan.seen == 0 and stored and not allow_empty:
        # An unmounted volume or a wrong path looks exactly like "everything was deleted".
        raise CorpusError(
            f"{Path(corpus) / 'documents'} holds no documents but the store holds {len(stored)}; "
            "refusing to delete them all (wrong folder?). Pass --allow-empty to remove them."
        )
    fingerprint = settings_fingerprint(chunking)
    if dry_run:
        plan = plan_sync(scan, stored, chunking, full=full, accept_edits=accept_edits)
        result = RunResult(store.name, plan, scan.seen, dry_run=True, defaulted_access=scan.defaulted_access)
        result.written = sum(i.write for i in plan.items)
        result.deleted = sum(i.delete for i in plan.items)
        # Rewritten IDs (moves, metadata changes) replace themselves: only new IDs add up.
        added = sum(len({c.chunk_id for c in chunks} - set(old.chunk_ids if old else ())) for _, chunks, old in plan.to_write)
        result.total = result.written if full else store.counts()["totals"]["chunks"] - result.deleted + added
        result.access_changes = access_changes
        result.elapsed_s = time.perf_counter() - started
        return result

    with store.lock(_owner(), wait_s=lock_wait_s):
        if full:
            plan = plan_sync(scan, [], chunking, full=True)
            result = RunResult(store.name, plan, scan.seen, defaulted_access=scan.defaulted_access)
            old_keys = {r.key: r for r in store.documents()}  # read again under the lock
            with store.full_rebuild() as fresh:
                _write_plan(fresh, plan, fingerprint, result, _ticker(progress, len(plan.to_write)))
                fresh.set_meta(_meta(settings, chunking))
            rebuilt = {doc.meta.key for doc, _, _ in plan.to_write}
            new_ids = {c.chunk_id for _, chunks, _ in plan.to_write for c in chunks}
            result.deleted = sum(1 for old in old_keys.values() for cid in old.chunk_ids if cid not in new_ids)
            for key, old in old_keys.items():
                if key not in rebuilt:
                    plan.items.append(PlannedDocument("removed", key, old.source, "not in the rebuilt index", delete=old.chunk_count))
        else:
            repaired = repair(store)
            plan = plan_sync(scan, store.documents(), chunking, accept_edits=accept_edits)
            result = RunResult(store.name, plan, scan.seen, repaired=repaired, defaulted_access=scan.defaulted_access)
            steps = len(plan.to_write) + len(plan.to_remove)
            _write_plan(store, plan, fingerprint, result, _ticker(progress, steps))
            meta = _meta(settings, chunking)
            stored_meta = store.get_meta()
            if steps or any(stored_meta.get(k) != v for k, v in meta.items() if k != "built_at"):
                store.set_meta(meta)
            store.refresh()
        result.total = store.counts()["totals"]["chunks"]
    result.access_changes = access_changes
    result.warnings = list(getattr(store, "warnings", []))  # e.g. the lock release failed after the writes
    result.elapsed_s = time.perf_counter() - started
    return result


def _ticker(progress: Callable[[int, int], None] | None, total: int) -> Callable[[int], None]:
    """A counter that reports (done, total) to a progress callback as writes finish."""
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    return tick


def _meta(settings: Settings, chunking: ChunkSettings) -> dict[str, str]:
    """What the store records about how it was built (and the roles `search` reads back)."""
    return {
        "chunker": chunking.chunker,
        "size": str(chunking.size),
        "overlap": str(chunking.overlap),
        "parser_version": PARSER_VERSION,
        "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
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

    @property
    def ok(self) -> bool:
        return not (self.untraceable or self.missing_in_store or self.stale_in_store or self.orphan_chunks or self.incomplete_documents)

    def to_json(self) -> dict:
        return {
            "chunks": self.chunks,
            "untraceable": self.untraceable,
            "missing_in_store": self.missing_in_store,
            "stale_in_store": self.stale_in_store,
            "orphan_chunks": self.orphan_chunks,
            "incomplete_documents": self.incomplete_documents,
            "edited_in_folder": self.edited_in_folder,
            "rejected": [p.to_json() for p in self.problems],
        }


def verify(corpus: Path, store: Store, settings: Settings, on_file: Callable[[str], None] | None = None) -> VerifyResult:
    """Re-parse every source; every stored chunk must equal its characters; folder and store agree."""
    store.check()
    scan = scan_corpus(corpus, settings, on_file=on_file)
    texts = {doc.meta.key: doc.parsed.text for doc in scan.documents}
    records = {r.key: r for r in store.documents()}
    # A file edited without a version bump was refused by `run`; its stored chunks still
    # cite the bytes the store indexed, so they are reported as such, not as untraceable.
    edited = sorted(d.meta.key for d in scan.documents if d.meta.key in records and records[d.meta.key].source_sha256 != d.sha256)
    listed = {cid for r in records.values() for cid in r.chunk_ids}
    untraceable, orphans, count = [], [], 0
    present: set[str] = set()
    for chunk in store.iter_chunks():
        count += 1
        present.add(chunk.chunk_id)
        key = f"{chunk.doc_id}@{chunk.version}"
        text = texts.get(key)
        if key in edited:
            pass
        elif text is None or text[chunk.start:chunk.end] != chunk.text:
            untraceable.append(chunk.chunk_id)
        if chunk.chunk_id not in listed:
            orphans.append(chunk.chunk_id)
    incomplete = sorted(k for k, r in records.items() if not set(r.chunk_ids) <= present)
    missing = sorted(doc.source for doc in scan.documents if doc.meta.key not in records)
    stale = sorted(k for k in records if k not in texts)
    return VerifyResult(count, sorted(untraceable), missing, stale, sorted(orphans), incomplete, list(scan.problems), edited)


def parse_as_of(value: str | None) -> date | None:
    if value is None:
        return date.today()
    if value.lower() in ("any", "all", "none"):
        return None
    return date.fromisoformat(value)
