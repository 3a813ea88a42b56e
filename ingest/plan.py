"""The sync plan: what a run does to each document version (new, changed, moved, kept,
removed...) from the scanned folder and the stored records."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ingest.corpus import CorpusScan, read_document
from ingest.default_access import DEFAULT_REFUSED, default_clashes
from ingest.kept import Claim, claimed, refused_claim, scan_claims, verdict
from ingest.kept import keep_reason as keep_reason
from ingest.kept import withdraw_reason as withdraw_reason
from ingest.model import (
    Chunk,
    DocumentProblems,
    DocumentRecord,
    ScannedDocument,
    SourceDocument,
    UnreadableFile,
    json_fields,
)
from ingest.parse import PARSER_VERSION, parse_bytes
from ingest.settings import ChunkSettings

if TYPE_CHECKING:  # only an annotation: sync imports this module
    from ingest.sync import _EarlyWriter

Action = Literal["new", "changed", "moved", "unchanged", "removed", "rejected", "kept"]


ACTIONS: tuple[Action, ...] = ("new", "changed", "moved", "unchanged", "removed", "rejected", "kept")


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
ToWrite = tuple[ScannedDocument, list[Chunk] | WrittenChunks, DocumentRecord | None]


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
        return json_fields(self, rename={"key": "document", "write": "chunks_write", "delete": "chunks_delete"})


@dataclass
class Plan:
    items: list[PlannedDocument] = field(default_factory=list)
    # what executing needs, kept out of the printable plan
    to_write: list[ToWrite] = field(default_factory=list)
    to_remove: list[DocumentRecord] = field(default_factory=list)
    problems: list[DocumentProblems] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)
    # doc_ids whose valid new version was refused (by the chunker or the store): their stored
    # versions are kept while no valid version replaces them (see ingest.kept)
    held: set[str] = field(default_factory=set)
    claims: list[Claim] = field(default_factory=list)  # rejected files naming a doc_id (see ingest.kept)
    present: set[str] = field(default_factory=set)  # doc_id@version of every valid document in the folder
    withdrawn: set[str] = field(default_factory=set)  # the folder now limits who/when may read (_withdraw)
    # withdrawn versions (doc_id@version -> sha256 of the bytes they were indexed from): their file may
    # come back as "new" only with those bytes, a new version, or --accept-edits (stored in the meta)
    tombstones: dict[str, str] = field(default_factory=dict)
    # the access label of each withdrawn version (doc_id@version), while remembered (see remembers): a file
    # given its access by access.default must not bring it back under another label (ingest.default_access)
    withdrawn_access: dict[str, str] = field(default_factory=dict)
    remembered_ids: set[str] = field(default_factory=set)  # doc_ids in the folder (see remembers)

    def remembers(self, key: str) -> bool:
        """A withdrawn version's label stays while it has a tombstone or a file of its doc_id is here."""
        return key in self.tombstones or key.split("@", 1)[0] in self.remembered_ids

    def remembered_access(self) -> dict[str, str]:
        """The labels of the withdrawn versions still remembered."""
        return {key: label for key, label in self.withdrawn_access.items() if self.remembers(key)}

    def count(self, action: Action) -> int:
        return sum(1 for item in self.items if item.action == action)

    def replaced(self, doc_id: str) -> bool:
        """A valid version of ``doc_id`` is in the folder and was not refused: it, not an older
        stored version, is what readers get (a version rejected beside it changes nothing)."""
        live: tuple[Action, ...] = ("new", "changed", "moved", "unchanged")
        return any(item.action in live and item.key.split("@", 1)[0] == doc_id for item in self.items)

    def hold(self, doc: ScannedDocument, old: DocumentRecord | None) -> None:
        """``doc``, a valid version, was refused (by the chunker or the store): the stored versions
        of its doc_id stay only as visible as it declares (see ingest.kept)."""
        self.held.add(doc.meta.doc_id)
        self.claims.append(refused_claim(doc, old))

    def keeps_after_refusal(self, old: DocumentRecord) -> bool:
        """A planned removal whose replacement the store then refused: True when ``old`` stays
        (re-marked kept); withdrawn instead when the refused version declares other access,
        dates or status (never kept wider than the folder now says)."""
        if old.doc_id not in self.held or self.replaced(old.doc_id) or old.key in self.withdrawn:
            return False
        found = claimed(old, self.claims, self.replaced)
        if found is None:  # no refused file claims it (e.g. it is another stored version's own)
            return False
        if found.keep:
            self.set_action(old.key, "kept", f"its replacement was refused; version {old.version} stays")
            return True
        message = f"{found.reason}: the stored version {old.key} is withdrawn (never kept readable under access, "
        message += "dates or status the folder may no longer give)"
        for index, record in enumerate(self.problems):
            if record.source == found.source:
                self.problems[index] = replace(record, problems=(*record.problems, message))
        self.set_action(old.key, "removed", f"withdrawn: {found.reason}")
        self.withdrawn.add(old.key)
        return False

    def set_action(self, key: str, action: Action, reason: str) -> None:
        """Re-mark a planned document once the run knows better (refused, or kept)."""
        for index, item in enumerate(self.items):
            if item.key == key:
                self.items[index] = replace(
                    item, action=action, reason=reason, write=0 if action != "removed" else item.write
                )


def record_for(doc: ScannedDocument, chunks: Iterable[Chunk | WrittenChunk], fingerprint: str) -> DocumentRecord:
    meta = doc.meta
    return DocumentRecord(
        doc_id=meta.doc_id,
        version=meta.version,
        source=doc.source,
        source_sha256=doc.sha256,
        format=doc.format,
        **_stored_metadata(doc),
        settings_fingerprint=fingerprint,
        chunk_ids=tuple(c.chunk_id for c in chunks),
    )


METADATA_FIELDS = ("title", "access", "status", "effective_from", "effective_to", "superseded_by", "tags")


def _stored_metadata(doc: ScannedDocument) -> dict[str, Any]:
    """The METADATA_FIELDS of a document's record, in their stored form."""
    meta = doc.meta
    return {
        "title": meta.title,
        "access": meta.access,
        "status": meta.status,
        "effective_from": meta.effective_from.isoformat() if meta.effective_from else None,
        "effective_to": meta.effective_to.isoformat() if meta.effective_to else None,
        "superseded_by": meta.superseded_by,
        "tags": tuple(meta.tags),
    }


def _metadata_differs(doc: ScannedDocument, old: DocumentRecord) -> list[str]:
    # compared in the stored form, without building a record per document (an unchanged run asks this of
    # each): first all at once, field by field only when one differs
    meta = doc.meta
    if (
        meta.title == old.title
        and meta.access == old.access
        and meta.status == old.status
        and meta.superseded_by == old.superseded_by
        and (meta.effective_from.isoformat() if meta.effective_from else None) == old.effective_from
        and (meta.effective_to.isoformat() if meta.effective_to else None) == old.effective_to
        and tuple(meta.tags) == old.tags
    ):
        return []
    new = _stored_metadata(doc)
    return [f for f in METADATA_FIELDS if new[f] != getattr(old, f)]


class ChangedWhileRead(UnreadableFile):
    """The file had other bytes when read again than when the scan hashed it (it is being written)."""

    def __init__(self) -> None:
        super().__init__("the file changed while this run was reading it; the next run picks it up")


def parsed_document(doc: ScannedDocument, root: Path) -> SourceDocument:
    """The document with its body parsed: a scan may have skipped it (bytes already stored). Its
    metadata was read by the scan, with the corpus's access labels; they change no parsed text."""
    if isinstance(doc, SourceDocument):
        return doc
    data = read_document(Path(root) / doc.source)
    if hashlib.sha256(data).hexdigest() != doc.sha256:
        raise ChangedWhileRead()
    return SourceDocument(doc.source, doc.sha256, parse_bytes(data, doc.source), doc.meta, doc.format)


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
    tombstones: Mapping[str, str] | None = None,
    stored_chunks: Callable[[DocumentRecord], list[Chunk]] | None = None,
    previous: Mapping[str, DocumentRecord] | None = None,
    withdrawn_access: Mapping[str, str] | None = None,
) -> Plan:
    """Compare the folder with the store's records; decides, writes nothing (but deletes again
    the chunks ``early`` wrote during the scan for documents it does not take). ``tombstones`` and
    ``withdrawn_access``: the versions earlier runs withdrew, with their bytes and their labels.

    Only documents that must be written are parsed (if the scan skipped them) and chunked.
    """
    stored_by_key = {} if full else {r.key: r for r in stored}
    plan = Plan(problems=list(scan.problems))
    # files rejected by the scan: their stored versions stay only as visible as the folder now says
    plan.claims = scan_claims(scan, previous.values() if full and previous else stored_by_key.values())
    # A version withdrawn by an earlier run stays withdrawn while its file is in the folder: not taken
    # as "new" with other bytes (that would let an edit without a version bump in through the back door).
    in_folder = {doc.meta.key for doc in scan.documents} | {r.key for r in scan.rejected_files if r.key}
    plan.tombstones = {key: sha for key, sha in (tombstones or {}).items() if key in in_folder}
    # A withdrawn version's label is remembered while its doc_id is in the folder, whatever the version
    # (a file bumped to a version without access must not get the default once the old file is gone).
    plan.remembered_ids = {key.split("@", 1)[0] for key in in_folder}
    plan.withdrawn_access = {k: v for k, v in (withdrawn_access or {}).items() if plan.remembers(k)}
    # access.default may fill in only the label each doc_id is (or was) stored under
    records = (previous or {}).values() if full else stored_by_key.values()
    clashes = default_clashes(scan, records, plan.withdrawn_access)
    for doc in scan.documents:
        old = stored_by_key.get(doc.meta.key)
        prior = (previous or {}).get(doc.meta.key) if full else None
        clash = clashes.get(doc.source)
        if clash is not None:  # refused: the stored versions stay only as visible as it now says (ingest.kept)
            _refuse(plan, doc, old or prior, clash, DEFAULT_REFUSED)
            continue
        try:
            _plan_scanned(plan, doc, old, prior, scan.root, chunking, accept_edits, early, stored_chunks)
        except ChangedWhileRead as exc:
            # Read again to compare its text with the stored one, it had other bytes: neither an edit
            # nor a new text, just a file caught mid-change (refused, its stored version kept or
            # withdrawn by what it declares, as for any refused file).
            _refuse(plan, doc, old or prior, f"{doc.source}: unreadable file: {exc}", str(exc))
    if early is not None:
        early.undo_rejected()
    _plan_removals(plan, scan, stored_by_key)
    if stored_chunks is not None:  # remember withdrawn versions by their text: a front-matter fix gets back in
        for old in plan.to_remove:
            if old.key in plan.withdrawn:
                plan.tombstones[old.key] = text_digest(stored_chunks(old))
    return plan


def _plan_scanned(
    plan: Plan,
    doc: ScannedDocument,
    old: DocumentRecord | None,
    prior: DocumentRecord | None,
    root: Path,
    chunking: ChunkSettings,
    accept_edits: bool,
    early: _EarlyWriter | None,
    stored_chunks: Callable[[DocumentRecord], list[Chunk]] | None,
) -> None:
    """One valid document of the scan against its stored version (``prior``: the live one, in a
    --full rebuild). Raises ChangedWhileRead when its file changed since the scan read it."""
    overrides = len(plan.overrides)
    if old is None and _edited_after_withdrawal(plan, doc, accept_edits, root, chunking):
        return
    if len(plan.overrides) > overrides:  # a withdrawn version's edited text, indexed by --accept-edits
        _plan_document(plan, doc, old, root, chunking, True, early)
        if plan.items[-1].key == doc.meta.key and plan.items[-1].action == "new":  # (not refused by the chunker)
            plan.items[-1] = replace(plan.items[-1], reason=WITHDRAWN_EDITED)
        return
    edited = old is not None and old.source_sha256 != doc.sha256 and not accept_edits
    metadata_only = edited and old is not None and _same_text(doc, old, root, chunking, stored_chunks)
    if prior is not None and prior.source_sha256 != doc.sha256 and not accept_edits:
        # A rebuild is no way around the edit check: the live store's version is the reference.
        if not _same_text(doc, prior, root, chunking, stored_chunks):
            _refuse_edit(plan, doc, prior)
            if prior.key not in plan.withdrawn:
                plan.held.add(doc.meta.doc_id)  # the live version is carried into the rebuild
            return
        metadata_only = True
    _plan_document(plan, doc, old, root, chunking, accept_edits or metadata_only, early, metadata_only)


def text_digest(chunks: Iterable[Chunk]) -> str:
    """What a reader is cited: every chunk's ID, text, pages and heading path, in order."""
    digest = hashlib.sha256()
    for chunk in sorted(chunks, key=lambda c: c.position):
        digest.update(repr((chunk.chunk_id, chunk.text, tuple(chunk.pages), tuple(chunk.heading_path))).encode())
    return "text:" + digest.hexdigest()


def _edited_after_withdrawal(
    plan: Plan, doc: ScannedDocument, accept_edits: bool, root: Path, chunking: ChunkSettings
) -> bool:
    """A withdrawn version's file with other text and no --accept-edits: refused as any edit without a
    version bump is (and it stays withdrawn); with its old text (its front matter fixed, say), or
    --accept-edits, it is indexed."""
    key = doc.meta.key
    withdrawn_sha = plan.tombstones.get(key)
    if withdrawn_sha is None:
        return False
    if withdrawn_sha in (doc.sha256, _current_digest(doc, root, chunking)):
        del plan.tombstones[key]
        return False
    if accept_edits:  # the same override as an edit of a stored version (said, and in --json's overrides)
        del plan.tombstones[key]
        plan.overrides.append(f"{doc.source}: {key} replaced in place (--accept-edits)")
        return False
    plan.problems.append(
        DocumentProblems(
            doc.source,
            doc.meta.doc_id,
            (
                f"{doc.source}: version: content changed but version {doc.meta.version!r} did not (the text of "
                "the withdrawn version differs); bump the version, or pass --accept-edits to replace it deliberately",
            ),
        )
    )
    plan.items.append(PlannedDocument("rejected", key, doc.source, "content changed, version did not (withdrawn)"))
    return True


def _changes(doc: ScannedDocument, old: DocumentRecord, fingerprint: str) -> tuple[Action, list[str]]:
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
WITHDRAWN_EDITED = "content edited without a version bump, its withdrawn version replaced (--accept-edits)"
METADATA_EDITED = "the file's metadata edited, its text unchanged"


def _same_text(
    doc: ScannedDocument,
    old: DocumentRecord,
    root: Path,
    chunking: ChunkSettings,
    stored_chunks: Callable[[DocumentRecord], list[Chunk]] | None,
) -> bool:
    """Whether a file whose bytes changed still gives the stored version's chunks — IDs, text, pages —
    exactly: then only its metadata (front matter, PDF information) was edited, and citations hold."""
    if stored_chunks is None or old.settings_fingerprint != settings_fingerprint(chunking):
        return False
    current = _current_digest(doc, root, chunking)
    return current is not None and current == text_digest(stored_chunks(old))


def _current_digest(doc: ScannedDocument, root: Path, chunking: ChunkSettings) -> str | None:
    """The text digest of the file as it is now; None when it cannot be chunked (it is refused later
    with the reason). ChangedWhileRead is raised: other bytes than the scan read are no edit."""
    from ingest.chunk import ChunkLimitExceeded, chunk_document  # only where a file is chunked (see _plan_document)

    try:
        return text_digest(chunk_document(parsed_document(doc, root), chunking))
    except ChangedWhileRead:
        raise
    except (OSError, UnreadableFile, ChunkLimitExceeded):
        return None


# Who may read a version, and when: the stored chunks must never stay readable by other roles or
# on other days than the folder now says, even when its edited content is refused.
VISIBILITY_FIELDS = ("access", "effective_from", "effective_to", "status")


def visibility_changes(doc: ScannedDocument, old: DocumentRecord) -> list[str]:
    """The fields among access, dates and status in which the folder's document differs from the stored one."""
    return [f for f in _metadata_differs(doc, old) if f in VISIBILITY_FIELDS]


def _withdraw_if_visibility_changed(plan: Plan, doc: ScannedDocument, old: DocumentRecord) -> None:
    """The folder's file changed without a version bump (refused) AND now gives other access,
    dates or status: keeping the stored chunks would serve them to readers the folder no longer
    allows (e.g. public → staff). Withdraw the stored version until the document is re-indexed."""
    changed = visibility_changes(doc, old)
    if not changed:
        return
    now = record_for(doc, [], "")
    fields = ", ".join(f"{f} {getattr(old, f)!r} → {getattr(now, f)!r}" for f in changed)
    _withdraw(
        plan,
        old,
        fields,
        f"{doc.source}: {fields} in the folder: the stored version {old.version} is withdrawn (never kept "
        "readable under its old access or dates); it stays out until the file has a new version, its indexed "
        "text again, or a run passes --accept-edits",
        source=doc.source,  # the file that withdraws it (renamed: the old path is a removal, not a rejection)
    )


def _refuse_edit(plan: Plan, doc: ScannedDocument, old: DocumentRecord) -> None:
    """Other text under a stored version: refused (its citations would point at new text), and the
    stored version withdrawn when the edit also narrows who may read it or when."""
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
    plan.items.append(PlannedDocument("rejected", doc.meta.key, doc.source, "content changed, version did not"))
    _withdraw_if_visibility_changed(plan, doc, old)


def _plan_document(
    plan: Plan,
    doc: ScannedDocument,
    old: DocumentRecord | None,
    root: Path,
    chunking: ChunkSettings,
    edits: bool,
    early: _EarlyWriter | None = None,
    metadata_only: bool = False,
) -> None:
    """One valid document of the folder: unchanged, or chunked (unless ``early`` already did,
    as the scan parsed it) and planned for writing. ``metadata_only``: its bytes changed but its
    chunks' text did not (front matter or PDF information edited): a metadata change, not an edit."""
    key = doc.meta.key
    plan.present.add(key)
    if old is not None and old.source_sha256 != doc.sha256 and not edits:
        _refuse_edit(plan, doc, old)
        return
    action, reasons = ("new", []) if old is None else _changes(doc, old, settings_fingerprint(chunking))
    if action == "unchanged":
        plan.items.append(PlannedDocument("unchanged", key, doc.source))
        return
    # imported by the first document to chunk: a run with nothing to write never loads the chunker
    from ingest.chunk import ChunkLimitExceeded, chunk_document

    if metadata_only:
        reasons = [METADATA_EDITED if reason == EDITED else reason for reason in reasons]
    elif EDITED in reasons:
        plan.overrides.append(f"{doc.source}: {key} replaced in place (--accept-edits)")
    try:
        chunks: list[Chunk] | WrittenChunks
        if early is not None and doc.source in early.chunked:
            chunks = early.take(doc.source)
        else:
            chunks = chunk_document(parsed_document(doc, root), chunking)
            if early is not None:
                chunks = early.hold(chunks)  # kept on disk until its write batch: memory stays flat
    except (OSError, UnreadableFile) as exc:
        _refuse(plan, doc, old, f"{doc.source}: unreadable file: {exc}", str(exc))
        return
    except ChunkLimitExceeded as exc:
        # Refused before any write, the same way for every store
        _refuse(plan, doc, old, f"{doc.source}: {exc}", str(exc))
        return
    stale = len(set(old.chunk_ids) - {c.chunk_id for c in chunks}) if old else 0
    plan.items.append(PlannedDocument(action, key, doc.source, "; ".join(reasons), len(chunks), stale))
    plan.to_write.append((doc, chunks, old))


def _refuse(plan: Plan, doc: ScannedDocument, old: DocumentRecord | None, problem: str, reason: str) -> None:
    """A valid document refused while planned: its stored versions stay only as visible as it says."""
    plan.problems.append(DocumentProblems(doc.source, doc.meta.doc_id, (problem,)))
    plan.items.append(PlannedDocument("rejected", doc.meta.key, doc.source, reason))
    plan.hold(doc, old)


def _withdraw_rejected(plan: Plan, old: DocumentRecord, why: str, source: str = "") -> None:
    source = source or old.source
    # another file's reason names it already, as does a reason about its own file (ingest.kept)
    named = why if source != old.source or why.startswith(f"{source}: ") else f"{source}: {why}"
    message = (
        f"{named}: the stored version {old.key} is withdrawn (never kept readable under "
        "access, dates or status the folder may no longer give); fix the file and the next run indexes it"
    )
    _withdraw(plan, old, why, message, source)


def _withdraw(plan: Plan, old: DocumentRecord, why: str, message: str, source: str = "") -> None:
    """Take a stored version out, with the reason added to the problem record of the file that
    withdraws it (its own by default), and remember it (a tombstone) so that its edited text does
    not come back as a new document."""
    source = source or old.source
    for index, record in enumerate(plan.problems):
        if record.source == source:
            plan.problems[index] = replace(record, problems=(*record.problems, message))
            break
    else:
        plan.problems.append(DocumentProblems(source, old.doc_id, (message,)))
    plan.items.append(PlannedDocument("removed", old.key, old.source, f"withdrawn: {why}", delete=old.chunk_count))
    plan.to_remove.append(old)
    plan.withdrawn.add(old.key)
    plan.tombstones[old.key] = old.source_sha256
    plan.withdrawn_access[old.key] = old.access


def _plan_removals(plan: Plan, scan: CorpusScan, stored_by_key: Mapping[str, DocumentRecord]) -> None:
    """Stored versions the folder no longer has: removed, unless they must be kept (or withdrawn)."""
    rejected_sources = frozenset(p.source for p in scan.rejected)
    for key, old in sorted(stored_by_key.items()):
        if key in plan.present:
            continue
        found = verdict(old, scan, plan.held, plan.claims, plan.replaced, rejected_sources)
        if found is not None and not found.keep:
            _withdraw_rejected(plan, old, found.reason, found.source)
            continue
        if found is not None:
            # What cannot be read or was rejected is a problem (exit 1), never a deletion.
            plan.items.append(PlannedDocument("kept", key, old.source, found.reason))
            continue
        plan.items.append(PlannedDocument("removed", key, old.source, gone_reason(old, scan), delete=old.chunk_count))
        plan.to_remove.append(old)


def gone_reason(old: DocumentRecord, scan: CorpusScan) -> str:
    """Why a stored version leaves when the folder simply no longer has it (naming the versions it has)."""
    others = sorted(doc.meta.version for doc in scan.documents if doc.meta.doc_id == old.doc_id)
    return f"version {old.version} no longer in the folder" + (f" (it has {', '.join(others)})" if others else "")


def withdraw_after_rebuild(
    plan: Plan,
    scan: CorpusScan,
    left_out: Iterable[DocumentRecord],
    stored_chunks: Callable[[DocumentRecord], list[Chunk]],
) -> None:
    """In a --full rebuild, the live versions neither rebuilt nor carried over that an incremental run
    would withdraw (a rejected file that narrows who may read them or when): reported and remembered
    the same way ("withdrawn: …", the problem record, the tombstone), not as merely left out."""
    rejected_sources = frozenset(p.source for p in scan.rejected)
    for old in left_out:
        if old.key in plan.withdrawn or old.key in plan.present:
            continue
        found = verdict(old, scan, plan.held, plan.claims, plan.replaced, rejected_sources)
        if found is not None and not found.keep:
            _withdraw_rejected(plan, old, found.reason, found.source)
            plan.tombstones[old.key] = text_digest(stored_chunks(old))
