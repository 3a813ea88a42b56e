"""The run journal (what a run is about to touch, so `repair` can finish a killed run) and the
scan memo (what the last run saw of the folder), both kept in the store's meta."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from ingest.corpus import ScanMemo
from ingest.file_check import Rejected
from ingest.model import DocumentProblems, DocumentRecord
from ingest.store.base import Store

JOURNAL = "journal"  # meta key: what a run is about to write or delete (JSON), "" when nothing is pending


TOMBSTONES = "withdrawn"  # meta key: {doc_id@version: sha256} of versions withdrawn while their file stays (JSON)
# meta key: {doc_id@version: access label} of the withdrawn versions above (JSON; see ingest.default_access)
WITHDRAWN_ACCESS = "withdrawn_access"
SCAN_MEMO = "scan_memo"  # meta key: what the last run saw of the folder (see corpus.ScanMemo)


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
    return repaired_counts(deleted, len(broken))


def repaired_counts(orphan_chunks: int = 0, incomplete_documents: int = 0) -> dict[str, int]:
    """What a repair reports (a run's ``repaired``): both keys always, so `--json` keeps its shape."""
    return {"orphan_chunks": orphan_chunks, "incomplete_documents": incomplete_documents}


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
    return repaired_counts(deleted, len(broken))


def scan_memo(meta: Mapping[str, str], stored: list[DocumentRecord]) -> ScanMemo | None:
    """What the last run recorded about the folder, with the stored records' metadata."""
    try:
        memo = json.loads(meta.get(SCAN_MEMO) or "null")
        if not isinstance(memo, dict):
            return None
        known = {(r.source, r.source_sha256): r.meta() for r in stored}
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


def read_tombstones(meta: Mapping[str, str], name: str = TOMBSTONES) -> dict[str, str]:
    """Versions an earlier run withdrew, with the sha256 of the bytes they were indexed from (or, with
    ``name`` WITHDRAWN_ACCESS, with the access label they had)."""
    try:
        found = json.loads(meta.get(name) or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def tombstones_json(tombstones: Mapping[str, str]) -> str:
    return json.dumps(dict(sorted(tombstones.items())), separators=(",", ":"))
