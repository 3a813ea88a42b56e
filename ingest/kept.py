"""Which stored versions a run keeps when files of the folder are rejected, and which it withdraws.

A stored version outlives a rejected file only while the folder still declares exactly its access,
dates and status: a typo never keeps a passage readable by people the folder may no longer allow.
A rejected file claims a stored version when it is that version's own file (the same path, or the
same doc_id and version under another path: moved), or when it is another version of the same
doc_id that no stored version owns (a version bump with a typo elsewhere). A stored version whose
file is gone and that no rejected file claims is simply no longer in the folder. A stored version
superseded by a valid document of another doc_id is never kept on a day that one is in force
(indexed by an older release, before that was refused): a passage out of date is never served. Nor is
one stored under a label dropped from the settings' ``[access] labels``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ingest.corpus import CorpusScan
from ingest.file_check import refused_bytes
from ingest.metadata import Visibility, visibility_of
from ingest.metadata_cross import beside_replacement
from ingest.model import DocumentRecord, ScannedDocument

UNREADABLE = "its file changed and no longer declares readable access, dates and status"
REFUSED = (
    "its file's metadata is refused by this release's readers (ambiguous or hidden fields), so its unchanged "
    "bytes no longer vouch for the access, dates and status it was indexed with"
)


@dataclass(frozen=True)
class Claim:
    """A file rejected this time that names a doc_id: it may keep (or withdraw) a stored version."""

    source: str
    doc_id: str
    key: str | None  # doc_id@version it declares; None when its version could not be told
    sha256: str  # of its bytes ("" when they could not be read)
    visibility: Visibility | None  # access, dates and status it declares; None: unreadable
    owner: str | None  # the stored version (doc_id@version) whose own file this is, if any


@dataclass(frozen=True)
class Verdict:
    keep: bool
    reason: str
    source: str  # the file the reason is about: a withdrawal is reported on its problem record


def scan_claims(scan: CorpusScan, stored: Iterable[DocumentRecord]) -> list[Claim]:
    """The claims of every rejected file of the scan whose doc_id could be read."""
    records = list(stored)
    keys = {record.key for record in records}
    by_source = {record.source: record for record in records}
    # the version each rejected file declares: a duplicate of a stored version claims it as its own file
    declared_keys = {**scan.rejected_keys, **{rejected.source: rejected.key for rejected in scan.rejected_files}}
    claims = []
    for problem in scan.rejected:
        if not problem.doc_id:
            continue  # no doc_id: it claims nothing (a stored version whose file is gone is removed)
        key = declared_keys.get(problem.source)
        sha256, declared = scan.rejected_visibility.get(problem.source, ("", None))
        owner = key if key in keys else None
        at_path = by_source.get(problem.source)
        if key is None and at_path is not None and at_path.doc_id == problem.doc_id:
            owner = at_path.key  # its version unknown (rejected between documents): the file at that path
        claims.append(Claim(problem.source, problem.doc_id, key, sha256, declared, owner))
    return claims


def refused_claim(doc: ScannedDocument, old: DocumentRecord | None) -> Claim:
    """A valid document refused while planned (the chunker's limits, unreadable when chunked)."""
    meta = doc.meta
    return Claim(doc.source, meta.doc_id, meta.key, doc.sha256, visibility_of(meta), old.key if old else None)


def _differences(old: DocumentRecord, declared: Visibility) -> list[tuple[str, str, str]]:
    """(field, stored value, every value the folder declares) where they are not exactly the same."""
    stored = {
        "access": old.access,
        "effective_from": old.effective_from or "",
        "effective_to": old.effective_to or "",
        "status": old.status,
    }
    return [
        (name, stored[name], " / ".join(repr(v) for v in values) or "none")
        for name, values in declared
        if values != (stored[name],)
    ]


def same_file_reason(old: DocumentRecord, sha256: str, declared: Visibility | None) -> str | None:
    """Why the stored version's own file, rejected this time, withdraws it (None: it keeps it).

    It keeps it only while it still declares exactly the stored access, dates and status, or its
    bytes are the stored ones and nothing says otherwise: a file that now names another label, a
    bad label, no label, or cannot be read at all after an edit may be narrowing who may read it, and
    a reader that refuses the file's metadata (a release's stricter rules) says otherwise.
    """
    if declared is None:
        refused = refused_bytes(sha256)
        if refused is not None:  # unchanged bytes a stricter release refuses, or an edit that broke them
            return REFUSED if refused == old.source_sha256 else UNREADABLE
        return None if sha256 in ("", old.source_sha256) else UNREADABLE
    differs = _differences(old, declared)
    return ", ".join(f"{name} {was!r} → {now}" for name, was, now in differs) + " in the folder" if differs else None


def withdraw_reason(old: DocumentRecord, scan: CorpusScan) -> str | None:
    """The same-path rule: why the stored version of a file rejected this time must not stay readable."""
    sha256, declared = scan.rejected_visibility.get(old.source, ("", None))
    return same_file_reason(old, sha256, declared)


def _other_version_reason(old: DocumentRecord, claim: Claim) -> str | None:
    """Why a rejected other version of the doc_id withdraws the stored one (None: same visibility)."""
    what = f"{claim.source} ({claim.key or claim.doc_id}, rejected)"
    if claim.visibility is None:
        return f"{what} declares no readable access, dates and status"
    differs = _differences(old, claim.visibility)
    if not differs:
        return None
    declares = ", ".join(f"{name} {now}" for name, _, now in differs)
    stored = ", ".join(f"{name} {was!r}" if was else f"{name} none" for name, was, _ in differs)
    return f"{what} declares {declares}; the stored version {old.version} has {stored}"


def claimed(old: DocumentRecord, claims: Iterable[Claim], replaced: Callable[[str], bool]) -> Verdict | None:
    """The verdict of the rejected files that claim ``old``: its own file (wherever it now lives)
    by the same-file rule, and versions of its doc_id that no stored version owns."""
    mine = [c for c in claims if c.doc_id == old.doc_id]
    own = [c for c in mine if c.owner == old.key]
    # another version keeps the stored one only while no valid version of the doc_id replaces it
    others = [] if replaced(old.doc_id) else [c for c in mine if c.owner is None]
    for claim in own:
        why = same_file_reason(old, claim.sha256, claim.visibility)
        if why:
            return Verdict(False, f"{_own_file(claim, old)}: {why}", claim.source)
    for claim in others:
        why = _other_version_reason(old, claim)
        if why:
            return Verdict(False, why, claim.source)
    if own:
        return Verdict(
            True,
            f"{_own_file(own[0], old)} was rejected this time and declares the stored access, dates and status; "
            f"the stored version {old.version} is kept",
            own[0].source,
        )
    if others:
        return Verdict(
            True,
            f"another version of {old.doc_id} ({others[0].source}, {others[0].key or 'version unknown'}) was "
            f"rejected and declares the stored access, dates and status; the stored version {old.version} is kept",
            others[0].source,
        )
    return None


def _own_file(claim: Claim, old: DocumentRecord) -> str:
    return claim.source if claim.source == old.source else f"{claim.source} (its file, moved from {old.source})"


def outdated_reason(old: DocumentRecord, scan: CorpusScan) -> str | None:
    """Why ``old`` must not stay whatever its file declares: it is superseded by a valid document of
    the folder (another doc_id) and in force on a day that one is (None: it is not)."""
    if old.status != "superseded" or not old.superseded_by:
        return None
    target = next((doc.meta for doc in scan.documents if doc.meta.key == old.superseded_by), None)
    how = beside_replacement(old.meta(), target) if target else None
    return f"the stored version {old.version} is {how}" if how else None


def unknown_label_reason(old: DocumentRecord, scan: CorpusScan) -> str | None:
    """Why ``old`` must not stay whatever its file declares: its label is no longer one of the settings'
    (dropped from ``[access] labels``: no role may read it now, and what no label allows is not kept)."""
    if old.access in scan.labels:
        return None
    return f"its access label {old.access!r} is no longer one of [access] labels ({', '.join(scan.labels)})"


def verdict(
    old: DocumentRecord,
    scan: CorpusScan,
    held: set[str],
    claims: Iterable[Claim],
    replaced: Callable[[str], bool],
    rejected_sources: frozenset[str],
) -> Verdict | None:
    """Whether a stored version that is not among the folder's valid documents is kept or withdrawn
    (with the reason), or None: it is no longer in the folder and is removed. Withdrawals first."""
    same_path = old.source in rejected_sources
    if same_path:
        why = withdraw_reason(old, scan)
        if why:
            return Verdict(False, why, old.source)
    by_claims = claimed(old, claims, replaced)
    if by_claims is not None and not by_claims.keep:
        return by_claims
    if same_path:
        return _kept(old, scan, f"{old.source} was rejected this time; the stored version is kept", old.source)
    for folder in scan.unreadable_folders:
        if old.source.startswith(folder.rstrip("/") + "/"):
            why = withdraw_reason(old, scan)  # its inventory entry may narrow it all the same
            if why:
                return Verdict(False, f"{why} (inventory.yaml; {folder} could not be read)", old.source)
            return _kept(old, scan, f"{folder} could not be read; the stored version is kept", old.source)
    if by_claims is not None:
        return _kept(old, scan, by_claims.reason, by_claims.source)
    if old.doc_id in held and not replaced(old.doc_id):
        # A replacement refused by the store: kept only while no valid version of the document
        # replaces it (otherwise an older version would outlive a re-release that narrowed it).
        why = f"a version of {old.doc_id} was refused; the stored version {old.version} is kept"
        return _kept(old, scan, why, old.source)
    return None


def _kept(old: DocumentRecord, scan: CorpusScan, reason: str, source: str) -> Verdict:
    """Kept for ``reason``, unless nothing may keep it: out of date beside its replacement, or under a label
    the settings no longer have (the withdrawal is reported on ``source``, the file the reason is about)."""
    why = outdated_reason(old, scan) or unknown_label_reason(old, scan)
    return Verdict(False, why, source) if why else Verdict(True, reason, source)


def keep_reason(
    old: DocumentRecord,
    scan: CorpusScan,
    held: set[str],
    rejected_sources: frozenset[str] | None = None,
    replaced: Callable[[str], bool] | None = None,
    claims: Iterable[Claim] | None = None,
) -> str | None:
    """Why a stored version that is not in the folder's valid documents must stay, or None
    (withdrawn, or no longer in the folder). ``claims``: default, the scan's rejected files."""
    if rejected_sources is None:
        rejected_sources = frozenset(p.source for p in scan.rejected)
    if claims is None:
        claims = scan_claims(scan, [old])
    found = verdict(old, scan, held, claims, replaced or (lambda _doc_id: False), rejected_sources)
    return found.reason if found is not None and found.keep else None
