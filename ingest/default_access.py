"""``access.default`` never changes the label of a document the store holds.

A label filled in from the default is nobody's decision about that document. A rename that leaves its
inventory.yaml entry naming no file, an entry deleted, or a default edited in ingest.toml would
otherwise rewrite a stored staff version as partner although nobody wrote 'partner' for it. So a
document whose access comes from the default while the store holds a version of its doc_id under
another label (this one, or another that the folder no longer holds with a label written for it), or
an earlier run withdrew one that had another label, is refused; ingest.kept then withdraws the stored
versions whose label differs from what the file now gets.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass

from ingest.corpus import CorpusScan
from ingest.model import DocumentRecord, ScannedDocument


@dataclass(frozen=True)
class KnownLabel:
    """The label a version of a doc_id had in the store (still there, or withdrawn by an earlier run)."""

    key: str  # doc_id@version
    access: str
    withdrawn: bool


def known_labels(stored: Iterable[DocumentRecord], withdrawn_access: Mapping[str, str]) -> dict[str, list[KnownLabel]]:
    """doc_id -> the labels of its stored versions and of those earlier runs withdrew (remembered
    while their file stays in the folder: a withdrawn version must not come back wider next run)."""
    found: dict[str, list[KnownLabel]] = {}
    keys = set()
    for record in stored:
        found.setdefault(record.doc_id, []).append(KnownLabel(record.key, record.access, False))
        keys.add(record.key)
    for key, access in sorted(withdrawn_access.items()):
        if key not in keys:
            found.setdefault(key.rsplit("@", 1)[0], []).append(KnownLabel(key, access, True))
    return found


def default_clash(doc: ScannedDocument, known: Iterable[KnownLabel], written: Container[str]) -> str | None:
    """The problem of a document given its access by ``access.default`` (``doc.meta.access``) when a
    version of its doc_id is or was stored under another label; None when none was.

    ``written``: the versions the folder holds, valid, with a label someone wrote. Another such version
    keeps its own label, so the default relabels nothing of it: this one is then just another version,
    given the default as on an empty store (and a second run over the same folder agrees with the first).
    """
    default, key = doc.meta.access, doc.meta.key
    others = sorted(
        (k for k in known if k.access != default and (k.key == key or k.key not in written)), key=lambda k: k.key
    )
    if not others:
        return None
    replaced = ", ".join(f"{k.access!r} of the {'withdrawn' if k.withdrawn else 'stored'} {k.key}" for k in others)
    return (
        f"{doc.source}: access: not given; the default {default!r} would replace {replaced} "
        "(set access in the file or inventory.yaml)"
    )


def default_clashes(
    scan: CorpusScan, stored: Iterable[DocumentRecord], withdrawn_access: Mapping[str, str]
) -> dict[str, str]:
    """source -> the problem of each valid document of the scan that the default would relabel."""
    defaulted = frozenset(scan.defaulted_sources)
    if not defaulted:
        return {}
    labels = known_labels(stored, withdrawn_access)
    written = {doc.meta.key for doc in scan.documents if doc.source not in defaulted}
    found = {}
    for doc in scan.documents:
        clash = None if doc.source not in defaulted else default_clash(doc, labels.get(doc.meta.doc_id, ()), written)
        if clash is not None:
            found[doc.source] = clash
    return found


DEFAULT_REFUSED = "access not given: access.default differs from the stored label"
