"""`verify`: re-parse the folder and check the store against it (traceable chunks, missing,
stale, orphan and incomplete versions, metadata and access layout)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.corpus import CorpusScan, scan_corpus
from ingest.kept import keep_reason, scan_claims
from ingest.model import DocumentProblems, DocumentRecord, SourceDocument, json_fields
from ingest.plan import METADATA_FIELDS, record_for
from ingest.settings import Settings
from ingest.store.base import Store


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
    # folders under documents/ that could not be listed: the versions stored from them are not checked
    unreadable_folders: list[str] = field(default_factory=list)
    # labels of stored records or chunks that [access] labels no longer lists (the next run withdraws them)
    unknown_labels: list[str] = field(default_factory=list)

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
            or self.unknown_labels
        )

    def to_json(self) -> dict[str, Any]:
        return {**json_fields(self, skip=("problems",)), "rejected": [p.to_json() for p in self.problems]}


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


class _UnknownLabels:
    """Stored records and chunks under a label the settings no longer list (dropped from ``[access]
    labels``): by label, the versions and the number of chunks."""

    def __init__(self, labels: tuple[str, ...], records: Iterable[DocumentRecord]) -> None:
        self.labels = labels
        self.keys: dict[str, set[str]] = {}
        self.chunks: dict[str, int] = {}
        for record in records:
            if record.access not in labels:
                self.keys.setdefault(record.access, set()).add(record.key)

    def add_chunk(self, access: str, key: str) -> None:
        if access not in self.labels:
            self.keys.setdefault(access, set()).add(key)
            self.chunks[access] = self.chunks.get(access, 0) + 1

    def lines(self) -> list[str]:
        return [
            f"access label {label!r} is not one of [access] labels ({', '.join(self.labels)}): the store holds "
            f"{len(keys)} document version(s), {self.chunks.get(label, 0)} chunk(s) under it: "
            f"{', '.join(sorted(keys))}; the next `ingest run` takes them out"
            for label, keys in sorted(self.keys.items())
        ]


def verify(
    corpus: Path,
    store: Store,
    settings: Settings,
    on_file: Callable[[str], None] | None = None,
    workers: int | None = None,
) -> VerifyResult:
    """Re-parse every source; every stored chunk must equal its characters; folder and store agree."""
    store.check()
    access_layout = store.reconcile_access(settings.roles, check=True)  # reports, changes nothing
    scan = scan_corpus(corpus, settings, on_file=on_file, workers=workers)
    texts = {doc.meta.key: doc.parsed.text for doc in scan.documents if isinstance(doc, SourceDocument)}
    records = {r.key: r for r in store.documents()}
    kept = _kept_for_rejected_files(scan, records, texts)
    # Edited without a version bump (refused by `run`): its chunks still cite the stored bytes (not untraceable).
    edited = sorted(
        d.meta.key for d in scan.documents if d.meta.key in records and records[d.meta.key].source_sha256 != d.sha256
    )
    listed = {cid for r in records.values() for cid in r.chunk_ids}
    mismatches = _Mismatches({doc.meta.key: record_for(doc, [], "") for doc in scan.documents})
    for key, record in records.items():
        mismatches.compare(key, record)
    untraceable, orphans, count = [], [], 0
    present: set[str] = set()
    labels = _UnknownLabels(settings.labels, records.values())
    for chunk in store.iter_chunks():
        count += 1
        present.add(chunk.chunk_id)
        key = f"{chunk.doc_id}@{chunk.version}"
        labels.add_chunk(chunk.access, key)
        mismatches.compare(key, chunk)
        text = texts.get(key)
        if key in edited or key in kept:
            pass
        elif text is None or text[chunk.start : chunk.end] != chunk.text:
            untraceable.append(chunk.chunk_id)
        if chunk.chunk_id not in listed:
            orphans.append(chunk.chunk_id)
    incomplete = sorted(k for k, r in records.items() if not set(r.chunk_ids) <= present)
    listed_count = sum(len(r.chunk_ids) for r in records.values())
    if count != listed_count:
        # e.g. one chunk ID stored twice (in two label indices): the store serves more than its records list
        twice = count - len(present)
        access_layout.append(
            f"the store holds {count} chunks, its records list {listed_count}"
            + (f" ({twice} stored more than once under the same chunk ID)" if twice else "")
        )
    stale = sorted(k for k in records if k not in texts and k not in kept)
    return VerifyResult(
        count,
        sorted(untraceable),
        sorted(doc.source for doc in scan.documents if doc.meta.key not in records),  # missing in the store
        stale,
        sorted(orphans),
        incomplete,
        list(scan.problems),
        edited,
        mismatches.lines(),
        access_layout,
        list(scan.unreadable_folders),
        labels.lines(),
    )


def _kept_for_rejected_files(
    scan: CorpusScan, records: Mapping[str, DocumentRecord], texts: Mapping[str, str]
) -> set[str]:
    """Stored versions a run keeps because their file (or another version's) is rejected this time, by the
    run's own rule (``ingest.kept``): not stale, and their chunks not untraceable — the folder's rejected
    files are reported as such, not checked."""
    claims = scan_claims(scan, records.values())
    valid = {doc.meta.doc_id for doc in scan.documents}
    return {
        key
        for key, record in records.items()
        if key not in texts
        and keep_reason(record, scan, set(), replaced=lambda doc_id: doc_id in valid, claims=claims) is not None
    }
