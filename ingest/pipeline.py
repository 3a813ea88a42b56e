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

import os
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from ingest.api import parse_as_of as parse_as_of
from ingest.corpus import PARSER_TIMEOUT_S, CorpusError, CorpusScan, FolderAhead, scan_corpus
from ingest.journal import JOURNAL as JOURNAL
from ingest.journal import SCAN_MEMO as SCAN_MEMO
from ingest.journal import (
    WITHDRAWN_ACCESS,
    _Journal,
    read_tombstones,
    repaired_counts,
)
from ingest.journal import read_journal as read_journal
from ingest.journal import repair as repair
from ingest.journal import scan_memo as scan_memo
from ingest.journal import write_journal as write_journal
from ingest.model import DocumentRecord
from ingest.plan import ACTIONS as ACTIONS
from ingest.plan import EDITED as EDITED
from ingest.plan import METADATA_FIELDS as METADATA_FIELDS
from ingest.plan import VISIBILITY_FIELDS as VISIBILITY_FIELDS
from ingest.plan import Action as Action
from ingest.plan import Plan as Plan
from ingest.plan import PlannedDocument as PlannedDocument
from ingest.plan import ToWrite as ToWrite
from ingest.plan import WrittenChunk as WrittenChunk
from ingest.plan import WrittenChunks as WrittenChunks
from ingest.plan import gone_reason, text_digest, visibility_changes, withdraw_after_rebuild
from ingest.plan import keep_reason as keep_reason
from ingest.plan import parsed_document as parsed_document
from ingest.plan import plan_sync as plan_sync
from ingest.plan import record_for as record_for
from ingest.plan import settings_fingerprint as settings_fingerprint
from ingest.plan import with_corpus_limits as with_corpus_limits
from ingest.run_meta import build_meta
from ingest.run_meta import end_of_run_meta as end_of_run_meta
from ingest.run_meta import meta_differs as meta_differs
from ingest.run_meta import roles_record as roles_record
from ingest.run_meta import total_after as total_after
from ingest.run_meta import withdrawn_meta as withdrawn_meta
from ingest.run_result import RunResult as RunResult
from ingest.settings import ChunkSettings, Settings, SettingsError
from ingest.store.base import Store
from ingest.sync import DEFAULT_WRITE_BATCH_CHUNKS as DEFAULT_WRITE_BATCH_CHUNKS
from ingest.sync import _carry_over, _EarlyWriter, _release_written, _ticker, _write_plan
from ingest.verify import VerifyResult as VerifyResult
from ingest.verify import verify as verify


def _owner() -> str:
    return (
        f"ingest run pid {os.getpid()} on {socket.gethostname()} at {datetime.now(UTC).isoformat(timespec='seconds')}"
    )


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
    parser_memory_limit: int | None = None,
    parser_timeout_s: float | None = None,
    strict: bool = False,
    ahead: FolderAhead | None = None,
) -> RunResult:
    """Validate, chunk and write a corpus to a store; incremental unless ``full``.

    Tuning (the CLI passes it from the configuration): ``write_batch_chunks`` (None: 2000), ``workers``
    (parser processes; None: one per core), ``parser_memory_limit`` bytes and ``parser_timeout_s`` per
    file (None: defaults; 0: none). ``strict``: when any document is rejected nothing is written but what
    keeps readers safe (role aliases follow [roles]; versions the folder now restricts are withdrawn).
    ``ahead``: the folder's listing and hashes, already started by the caller (the CLI starts it
    before importing the store's client).
    """
    started = time.perf_counter()
    chunking = with_corpus_limits(chunking, settings.chunking)  # also in unchanged_check.unchanged_run
    batch_chunks = _batch_size(write_batch_chunks)
    # The folder is listed and hashed in a thread while the store answers (an incremental run).
    ahead = None if full or dry_run else (ahead or FolderAhead(corpus))
    store.check()  # unreachable → StoreUnavailable before anything is read or written
    # Access follows [roles] on every run, before anything else (a dry run only reports); a run that
    # waits for the lock does it under the lock (see _under_lock).
    access_changes = [] if lock_wait_s > 0 and not dry_run else _follow_roles(store, settings, dry_run, full)
    job = _Job(
        corpus,
        settings,
        chunking,
        full,
        accept_edits,
        allow_empty,
        on_file,
        progress,
        batch_chunks,
        workers,
        parser_memory_limit,
        parser_timeout_s,
    )
    dry = _strict_dry_run if strict else _dry_run
    result = dry(store, job) if dry_run else _under_lock(store, job, ahead, strict=strict, wait_s=lock_wait_s)
    # + what the store repaired of its layout under the lock (Elasticsearch: a label index deleted by hand)
    result.access_changes = access_changes + result.access_changes + list(getattr(store, "layout_repairs", []))
    result.warnings = list(getattr(store, "warnings", []))  # e.g. the lock release failed after the writes
    result.elapsed_s = time.perf_counter() - started
    return result


def _batch_size(write_batch_chunks: int | None) -> int:
    batch_chunks = DEFAULT_WRITE_BATCH_CHUNKS if write_batch_chunks is None else write_batch_chunks
    if batch_chunks < 1:
        raise SettingsError(f"write batch size must be ≥ 1 chunk; found {batch_chunks}")
    return batch_chunks


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
    parser_memory_limit: int | None
    parser_timeout_s: float | None


def _scan(
    job: _Job,
    stored: list[DocumentRecord],
    meta: Mapping[str, str],
    full: bool,
    early: _EarlyWriter | None = None,
    ahead: FolderAhead | None = None,
) -> CorpusScan:
    """The folder, reading as little as the store allows: files it holds with the same bytes,
    path, inventory and settings are only hashed; other stored bytes are not parsed. ``early``
    chunks and writes the others as they are parsed."""
    known = set() if full else {r.source_sha256 for r in stored}
    memo = None if full else scan_memo(meta, stored)
    try:
        scan = scan_corpus(
            job.corpus,
            job.settings,
            on_file=job.on_file,
            skip_body=known,
            workers=job.workers,
            memo=memo,
            on_accepted=early,
            ahead=ahead,
            parser_memory_limit=job.parser_memory_limit,
            parser_timeout_s=PARSER_TIMEOUT_S if job.parser_timeout_s is None else (job.parser_timeout_s or None),
            chunking=None if early is None else job.chunking,  # chunked in the parser processes
        )
        if early is not None:
            early.finish()  # every batch written (in its thread) before anything reads the counts
    except BaseException:
        if early is not None:
            early.abandon()  # nothing is written once the run stops (it is about to release its lock)
        raise
    if scan.seen == 0 and stored and not job.allow_empty and not scan.unreadable_folders:
        # An unmounted volume or a wrong path looks exactly like "everything was deleted".
        raise CorpusError(
            f"{Path(job.corpus) / 'documents'} holds no documents but the store holds {len(stored)}; "
            "refusing to delete them all (wrong folder?). Pass --allow-empty to remove them."
        )
    return scan


def _dry_run(store: Store, job: _Job) -> RunResult:
    stored = store.documents()
    meta = store.get_meta()
    rebuild_reason = analysis_change(store, stored, meta) or records_missing(store, stored)
    full = job.full or bool(rebuild_reason)
    early = _EarlyWriter(None, {} if full else {r.key: r for r in stored}, job.chunking, 1)
    scan = _scan(job, stored, meta, full, early)
    plan = plan_sync(
        scan,
        stored,
        job.chunking,
        full=full,
        accept_edits=job.accept_edits,
        early=early,
        tombstones=read_tombstones(meta),
        withdrawn_access=read_tombstones(meta, WITHDRAWN_ACCESS),
        stored_chunks=lambda old: store.document_chunks(old.doc_id, old.version),
        previous={r.key: r for r in stored},
    )
    _give_reason(plan, rebuild_reason)
    result = RunResult(store.name, plan, scan.seen, dry_run=True, defaulted_access=scan.defaulted_access)
    if rebuild_reason:
        result.rebuilt = rebuilt_reason(rebuild_reason, store.counts()["totals"]["chunks"], dry_run=True)
    result.written = sum(i.write for i in plan.items)
    result.deleted = sum(i.delete for i in plan.items)
    # Rewritten IDs (moves, metadata changes) replace themselves: only new IDs add up.
    added = sum(
        len({c.chunk_id for c in chunks} - set(old.chunk_ids if old else ())) for _, chunks, old in plan.to_write
    )
    result.total = result.written if full else sum(r.chunk_count for r in stored) - result.deleted + added
    return result


def _locked_run(store: Store, job: _Job, ahead: FolderAhead | None = None) -> RunResult:
    """The run proper, under the store's write lock: repair, scan (chunks written as documents
    are parsed), plan, records and deletions, then what the store records about the run."""
    meta = store.get_meta()
    stored = store.documents()
    rebuild_reason = analysis_change(store, stored, meta) or records_missing(store, stored)
    journaled = False  # the meta read above no longer says what the store holds once a journal is written
    if job.full or rebuild_reason:  # an index's analysis is fixed when it is created
        result, scan = _full_run(store, job, stored, meta, rebuild_reason)
    else:
        repaired = repair(store, stored, meta)
        if any(repaired.values()):
            stored = store.documents()
        journal = _Journal(store)
        stored_by_key = {r.key: r for r in stored}
        early = _EarlyWriter(store, stored_by_key, job.chunking, job.batch_chunks)
        scan = _scan(job, stored, meta, False, early, ahead)
        plan = plan_sync(
            scan,
            stored,
            job.chunking,
            accept_edits=job.accept_edits,
            early=early,
            tombstones=read_tombstones(meta),
            withdrawn_access=read_tombstones(meta, WITHDRAWN_ACCESS),
            stored_chunks=lambda old: store.document_chunks(old.doc_id, old.version),
        )
        result = RunResult(store.name, plan, scan.seen, repaired=repaired, defaulted_access=scan.defaulted_access)
        result.written, result.errors = early.written, list(early.errors)
        steps = len(plan.to_write) + len(plan.to_remove)
        fingerprint = settings_fingerprint(job.chunking)
        tick = _ticker(job.progress, steps)
        _write_plan(store, plan, fingerprint, result, tick, job.batch_chunks, journal=journal, refused=early.refused)
        result.total = total_after(stored, plan)
        _release_written(plan, result)
        journaled = bool(journal.keys)
    updates = end_of_run_meta(job.settings, job.chunking, store.analysis, scan, result)
    current = store.get_meta() if job.full or rebuild_reason or journaled else meta
    if meta_differs(current, updates):
        store.set_meta(updates)
    return result


def _strict_run(store: Store, job: _Job, ahead: FolderAhead | None = None) -> RunResult:
    """--strict: plan first without writing; write everything only when nothing was rejected.

    A refused run still withdraws what readers must no longer see — versions the folder now gives
    narrower access, other dates or another status (withdrawn by the plan, or changed and not written
    now) — because keeping them would serve passages to readers the folder no longer allows.
    """
    planned = _dry_run(store, job)
    if not planned.plan.problems:
        return _locked_run(store, job, ahead)
    refused = _strict_refusal(store, planned.plan)
    result = RunResult(store.name, refused, planned.seen, defaulted_access=planned.defaulted_access)
    result.strict_refused = True
    stored = store.documents()
    if refused.to_remove:
        journal = _Journal(store)
        tick = _ticker(job.progress, len(refused.to_remove))
        _write_plan(store, refused, settings_fingerprint(job.chunking), result, tick, job.batch_chunks, journal=journal)
        store.set_meta({JOURNAL: "", **withdrawn_meta(refused)})
    result.total = total_after(stored, refused)
    return result


def _strict_dry_run(store: Store, job: _Job) -> RunResult:
    """--strict --dry-run: what the strict run would do (refused: nothing written but the withdrawals)."""
    planned = _dry_run(store, job)
    if not planned.plan.problems:
        return planned
    refused = _strict_refusal(store, planned.plan)
    result = RunResult(store.name, refused, planned.seen, dry_run=True, defaulted_access=planned.defaulted_access)
    result.strict_refused = True
    result.deleted = sum(i.delete for i in refused.items)
    result.total = total_after(store.documents(), refused)
    return result


def _strict_refusal(store: Store, plan: Plan) -> Plan:
    """The plan a refused --strict run carries out: every valid document held back (a rejected line), and
    every removal that narrows what readers see."""
    # Removals only narrow what readers see: every one the plan makes is made (a version that left the
    # folder, or whose replacement is not written now, must not stay readable under its old access).
    removals = {old.key: old for old in plan.to_remove}
    withdrawn = {key for key in removals if key in plan.withdrawn}
    for doc, _, old in plan.to_write:
        if old is not None and old.key == doc.meta.key and visibility_changes(doc, old):
            removals[old.key] = old
            withdrawn.add(old.key)
    rejected = len({p.source for p in plan.problems if p.source.startswith("documents/")})
    note = f"not written: --strict and {rejected} document(s) rejected"
    items = []
    for item in plan.items:
        if item.action in ("new", "changed", "moved"):
            # a valid document not written counts as rejected (seen = indexed + unchanged + rejected); the
            # stored version of a changed one stays, unless it is withdrawn (a second line: removed)
            items.append(replace(item, action="rejected", reason=note, write=0, delete=0))
            if item.key in withdrawn:
                old = removals[item.key]
                reason = f"withdrawn: {item.reason}"
                item = PlannedDocument("removed", item.key, old.source, reason, delete=old.chunk_count)
            else:
                continue
        items.append(item)
    refused = Plan(
        items=items,
        to_remove=list(removals.values()),
        problems=plan.problems,
        held=set(),
        withdrawn=withdrawn,
        tombstones={
            **{
                key: text_digest(store.document_chunks(removals[key].doc_id, removals[key].version))
                for key in withdrawn
            },
            **plan.tombstones,
        },
        withdrawn_access={**{key: removals[key].access for key in withdrawn}, **plan.withdrawn_access},
        remembered_ids=plan.remembered_ids,
    )
    return refused


def _full_run(
    store: Store, job: _Job, stored: list[DocumentRecord], meta: Mapping[str, str], rebuild_reason: str
) -> tuple[RunResult, CorpusScan]:
    """A rebuild into a fresh store swapped in at the end; the stored versions it must keep are carried."""
    old_keys = {r.key: r for r in stored}
    fingerprint = settings_fingerprint(job.chunking)
    # chunks no record lists (a killed run's) go with the old build: reported as a repair would
    orphans = max(0, store.counts()["totals"]["chunks"] - sum(r.chunk_count for r in stored))
    with store.full_rebuild() as fresh:
        early = _EarlyWriter(fresh, {}, job.chunking, job.batch_chunks, hidden=True)
        scan = _scan(job, stored, meta, True, early)
        plan = plan_sync(
            scan,
            [],
            job.chunking,
            full=True,
            early=early,
            tombstones=read_tombstones(meta),
            withdrawn_access=read_tombstones(meta, WITHDRAWN_ACCESS),
            stored_chunks=lambda old: store.document_chunks(old.doc_id, old.version),
            previous=old_keys,
        )
        _give_reason(plan, rebuild_reason)
        lost = rebuild_reason.startswith(RECORDS_MISSING)  # the unlisted chunks are no killed run's
        result = RunResult(
            store.name,
            plan,
            scan.seen,
            repaired=repaired_counts(0 if lost else orphans),
            defaulted_access=scan.defaulted_access,
            rebuilt=rebuilt_reason(rebuild_reason, orphans),
        )
        result.written, result.errors = early.written, list(early.errors)
        tick = _ticker(job.progress, len(plan.to_write))
        _write_plan(fresh, plan, fingerprint, result, tick, job.batch_chunks, refused=early.refused)
        rebuilt = {i.key for i in plan.items if i.action in ("new", "changed", "moved")}
        carried = _carry_over(store, fresh, [old for key, old in old_keys.items() if key not in rebuilt], scan, plan)
        left_out = [old for key, old in old_keys.items() if key not in rebuilt and old not in carried]
        withdraw_after_rebuild(plan, scan, left_out, lambda old: store.document_chunks(old.doc_id, old.version))
        fresh.set_meta(build_meta(job.settings, job.chunking, store.analysis))
    # A chunk ID hashes its doc_id@version: an old chunk survives only among its own version's new
    # chunks (one document's IDs in memory at a time, never the whole index's).
    rewritten = {doc.meta.key: chunks for doc, chunks, _ in plan.to_write if doc.meta.key in rebuilt}
    result.deleted = 0
    for key, old in old_keys.items():
        if old in carried:
            continue
        kept = {c.chunk_id for c in rewritten[key]} if key in rewritten else set()
        result.deleted += sum(1 for cid in old.chunk_ids if cid not in kept)
    for key, old in old_keys.items():
        if key not in rebuilt and old not in carried and key not in plan.withdrawn:
            # as an incremental run says it, unless its file is there (refused: not in the rebuilt index)
            reason = "not in the rebuilt index" if key in plan.present else gone_reason(old, scan)
            plan.items.append(PlannedDocument("removed", key, old.source, reason, delete=old.chunk_count))
    result.total = store.counts()["totals"]["chunks"]
    _release_written(plan, result)
    return result, scan


def analysis_change(store: Store, stored: list[DocumentRecord], meta: Mapping[str, str] | None = None) -> str:
    """Why the store must be rebuilt for its search analysis ([search] language), or ""."""
    meta = store.get_meta() if meta is None else meta
    recorded = meta.get("analysis")
    if (not meta and not stored) or recorded == store.analysis:
        return ""
    if recorded is None and (not stored or "built_at" not in meta):
        # no finished build recorded (every finished run records when): a first build that never finished
        return "an earlier first build was interrupted; building again"
    if recorded is None:
        return f"search analysis not recorded (built by an older ingest); rebuilding with {store.analysis}"
    return f"search analysis changed ({recorded} → {store.analysis})"


def records_missing(store: Store, stored: list[DocumentRecord]) -> str:
    """Why the store must be rebuilt when it holds chunks but no document record (its documents index
    deleted or emptied outside ingest), or "". Nothing then says which chunks are whose, at which
    access: the label indices cannot be trusted (an edit or an access change would leave old chunks
    readable), so everything is built again and chunks no record lists go with the old build."""
    if stored or not store.counts()["totals"]["chunks"]:
        return ""
    return f"{RECORDS_MISSING}; rebuilding"


RECORDS_MISSING = "the document records were missing (documents index deleted or emptied outside ingest)"


def rebuilt_reason(rebuild_reason: str, unlisted_chunks: int, dry_run: bool = False) -> str:
    """A run's ``rebuilt`` (what made it rebuild everything as --full): the chunks no record lists, when the
    records were lost, go with the old build (they are not a killed run's: no repair to report)."""
    if rebuild_reason.startswith(RECORDS_MISSING):
        went = "would go" if dry_run else "went"
        return f"{RECORDS_MISSING}; {unlisted_chunks} chunks no record listed {went} with the old build"
    return rebuild_reason


def _give_reason(plan: Plan, reason: str) -> None:
    if reason:
        plan.items = [replace(item, reason=item.reason or reason) for item in plan.items]


def _under_lock(store: Store, job: _Job, ahead: FolderAhead | None, *, strict: bool, wait_s: float) -> RunResult:
    # Everything is read under the lock: a run never plans against a store another run replaced.
    with store.lock(_owner(), wait_s=wait_s):
        # Waited: the run it waited for may have replaced the build (a --full); what this run repairs and
        # reports of access must be the build it works on.
        access_changes = _follow_roles(store, job.settings, False, job.full) if wait_s > 0 else []
        result = _strict_run(store, job, ahead) if strict else _locked_run(store, job, ahead)
        result.access_changes = access_changes
        return result


def _follow_roles(store: Store, settings: Settings, dry_run: bool, full: bool) -> list[str]:
    """Every alias as [roles] says (a dry run only reports the differences), and the roles recorded."""
    changes = store.reconcile_access(settings.roles, check=dry_run, full=full)
    if not dry_run:
        _record_roles(store, settings)
    return changes


def _record_roles(store: Store, settings: Settings) -> None:
    """The roles searches resolve to labels follow [roles] before anything else, like the aliases:
    a run that then fails or writes nothing (--strict) must not leave a narrowed role reading more."""
    access = roles_record(settings)
    current = store.get_meta()
    if current and meta_differs(current, access):
        store.set_meta(access)
