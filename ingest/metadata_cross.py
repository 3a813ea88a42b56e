"""Checks between documents that each passed their own metadata checks (SPEC "Metadata"): one
doc_id@version defined twice, two versions of a doc_id in force on one day, a superseded_by naming
no document of the corpus, a document in force on a day its replacement (another doc_id) is."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection

from ingest.model import DocumentMeta


def _span(meta: DocumentMeta) -> str:
    start = meta.effective_from.isoformat() if meta.effective_from else None
    end = meta.effective_to.isoformat() if meta.effective_to else None
    if start and end:
        return f"{start} to {end}"
    if start:
        return f"from {start}"
    if end:
        return f"until {end}"
    return "no dates: every day"


def _overlap(a: DocumentMeta, b: DocumentMeta) -> bool:
    starts_in_time = a.effective_from is None or b.effective_to is None or a.effective_from <= b.effective_to
    ends_in_time = b.effective_from is None or a.effective_to is None or b.effective_from <= a.effective_to
    return starts_in_time and ends_in_time


def _first_common_day(a: DocumentMeta, b: DocumentMeta) -> str:
    starts = [d for d in (a.effective_from, b.effective_from) if d]
    return f"on {max(starts).isoformat()}" if starts else "every day"


def beside_replacement(meta: DocumentMeta, target: DocumentMeta) -> str | None:
    """How ``meta``, superseded by ``target`` (another doc_id), is still in force on a day its
    replacement is, or None. Search filters by dates only: both would be served that day."""
    if target.doc_id == meta.doc_id or not _overlap(meta, target):
        return None  # a same-doc_id target is the "versions in force on one day" rule's
    return (
        f"superseded by {target.key!r} ({_span(target)}) but itself in force ({_span(meta)}): "
        f"both are in force {_first_common_day(meta, target)}"
    )


def _outlives_replacement(source: str, meta: DocumentMeta, target: DocumentMeta) -> str | None:
    how = beside_replacement(meta, target)
    if how is None:
        return None
    written = repr(meta.effective_to.isoformat()) if meta.effective_to else "none"
    if target.effective_from:
        advice = f"give it an effective_to before its replacement's effective_from ({target.effective_from})"
    else:
        advice = "give its replacement an effective_from and it an effective_to before that day"
    return f"{source}: effective_to: {written}: {how}; {advice}"


def cross_document_problems(
    docs: list[tuple[str, DocumentMeta]],
    rejected_keys: Collection[str] = (),
) -> dict[str, list[str]]:
    """Problems between documents that each passed their own checks, by source.

    Duplicated ``doc_id@version``; two versions of one doc_id in force on a common day;
    ``superseded_by`` naming no document of ``docs``, or one of another doc_id in force on a day
    the superseded document also is (only the superseded one is rejected). ``rejected_keys`` are
    the keys of files rejected for their own problems, so a reference to one says so.
    """
    problems: dict[str, list[str]] = defaultdict(list)
    ordered = sorted(docs, key=lambda item: item[0])
    by_key: dict[str, list[str]] = defaultdict(list)
    meta_of: dict[str, DocumentMeta] = {}
    by_doc_id: dict[str, list[tuple[str, DocumentMeta]]] = defaultdict(list)
    for source, meta in ordered:
        by_key[meta.key].append(source)
        meta_of.setdefault(meta.key, meta)
        by_doc_id[meta.doc_id].append((source, meta))

    for source, meta in ordered:
        for other in by_key[meta.key]:
            if other != source:
                problems[source].append(f"{source}: doc_id@version: {meta.key!r} is also defined by {other}")
        for other, other_meta in by_doc_id[meta.doc_id]:
            if other_meta.version != meta.version and _overlap(meta, other_meta):
                problems[source].append(
                    f"{source}: effective_from: {meta.doc_id!r} version {meta.version!r} ({_span(meta)}) "
                    f"and version {other_meta.version!r} in {other} ({_span(other_meta)}) "
                    f"are both in force {_first_common_day(meta, other_meta)}"
                )
        target = meta.superseded_by
        if target is not None and target in meta_of:
            outlived = _outlives_replacement(source, meta, meta_of[target])
            if outlived:
                problems[source].append(outlived)
        elif target is not None:
            if target in rejected_keys:
                problems[source].append(f"{source}: superseded_by: {target!r} names a document that was rejected")
            else:
                problems[source].append(f"{source}: superseded_by: {target!r} names no document in the corpus")
    return {source: found for source, found in problems.items() if found}
