"""Writes routed to concrete indices: each chunk to its access label's index (a copy under its old
label removed first), deletes by ID to where a real-time multi-get finds each copy, records in bulk."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ingest.model import Chunk
from ingest.store.base import ItemError, StoreError, WriteReport, batched
from ingest.store.elasticsearch.transport import Action, Transport

IDS_BATCH = 1000  # IDs per lookup query and per write batch


def bulk_or_raise(t: Transport, actions: list[Action], refused: str) -> int:
    """Bulk actions on ingest's own records: any refusal is a StoreError (``refused`` says which,
    with {count}, {id} and {reason} of the first)."""
    actions = [{**a, "_source": _encoded(a["_source"])} if isinstance(a.get("_source"), dict) else a for a in actions]
    count, errors = t.bulk(actions)
    if errors:
        first = errors[0]
        raise StoreError(f"{t.where}: " + refused.format(count=len(errors), id=first.id, reason=first.reason))
    return count


def write_chunks(
    t: Transport,
    label_index: Mapping[str, str],
    chunks: Iterable[Chunk],
    source: Callable[[Chunk], dict[str, Any]],
    *,
    look_up: bool = True,
) -> WriteReport:
    """Write chunks to their labels' indices; what is refused is an ItemError in the report.
    ``look_up``: find copies under another label first (False: the label indices are known to
    hold none, e.g. created empty by this run)."""
    report = WriteReport()
    for batch in batched(chunks, IDS_BATCH):
        actions = _index_actions(label_index, batch, source, report)
        if not look_up:
            written, errors = t.bulk(actions)
            report.written += written
            report.errors.extend(errors)
            continue
        # A chunk whose label changed (same ID) leaves its old label's index first: a copy left
        # under the old label would stay readable by roles the new label excludes (and the
        # record, listing the ID, would never show it as an orphan). One removed but not yet
        # rewritten is missing, which the next run's repair notices. A copy that cannot be removed
        # (the old index refuses writes) stays readable under its old label: that is a store
        # fault the run stops on, saying so (never reported as "taken out").
        targets = {a["_id"]: a["_index"] for a in actions}
        moves = [
            {"_op_type": "delete", "_index": index, "_id": chunk_id}
            for chunk_id, index in locate(t, label_index, list(targets))
            if index != targets[chunk_id]
        ]
        if moves:
            _, move_errors = t.bulk(moves)
            if move_errors:
                raise _stuck_under_old_label(t, label_index, moves, move_errors)
        written, errors = t.bulk(actions)
        report.written += written
        report.errors.extend(errors)
    return report


def _stuck_under_old_label(
    t: Transport, label_index: Mapping[str, str], moves: list[Action], errors: list[ItemError]
) -> StoreError:
    first = errors[0]
    index = next((m["_index"] for m in moves if m["_id"] == first.id), "?")
    label = next((name for name, where in label_index.items() if where == index), "?")
    more = f" (and {len(errors) - 1} more chunks)" if len(errors) > 1 else ""
    return StoreError(
        f"{t.where}: the access label of chunk {first.id}{more} changed, but its copy in {index} (access "
        f"{label!r}) could not be removed: {first.reason}. It is STILL READABLE under access {label!r} "
        f"until {index} accepts writes again (e.g. its write block is lifted) and a run completes; "
        "the run stopped before writing this batch."
    )


def _index_actions(
    label_index: Mapping[str, str], chunks: list[Chunk], source: Callable[[Chunk], dict[str, Any]], report: WriteReport
) -> list[Action]:
    """One index action per chunk, to its label's index; an unknown label is an ItemError."""
    actions: list[Action] = []
    for chunk in chunks:
        index = label_index.get(chunk.access)
        if index is None:
            report.errors.append(ItemError(chunk.chunk_id, f"access label {chunk.access!r} is not configured"))
            continue
        actions.append(
            {"_op_type": "index", "_index": index, "_id": chunk.chunk_id, "_source": _encoded(source(chunk))}
        )
    return actions


# The client's serializer makes a JSON encoder per document it encodes; one made once gives the same
# bytes (compact, UTF-8 as is), and the client sends a string body as it is.
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _encoded(document: dict[str, Any]) -> str | dict[str, Any]:
    """The chunk's stored document as the client would encode it; left to the client (whose
    serializer knows dates, UUIDs and decimals) when a hook put in something plain JSON lacks."""
    try:
        return _ENCODER.encode(document)
    except (TypeError, ValueError):
        return document


def delete_chunks(t: Transport, label_index: Mapping[str, str], chunk_ids: Iterable[str]) -> int:
    """Delete every stored copy of these IDs; how many existed."""
    deleted = 0
    for batch in batched(chunk_ids, IDS_BATCH):
        actions = [{"_op_type": "delete", "_index": index, "_id": cid} for cid, index in locate(t, label_index, batch)]
        deleted += bulk_or_raise(t, actions, "{count} chunk deletions failed, e.g. {id}: {reason}")
    return deleted


def locate(t: Transport, label_index: Mapping[str, str], chunk_ids: list[str]) -> list[tuple[str, str]]:
    """(chunk_id, concrete index) of every stored copy of these IDs.

    A multi-get over every label index: real-time (it sees writes not yet refreshed), so a run
    never has to refresh between its own writes.
    """
    indices = sorted(set(label_index.values()))
    docs = [{"_index": index, "_id": cid} for cid in chunk_ids for index in indices]
    found: list[tuple[str, str]] = []
    for batch in batched(docs, IDS_BATCH * 3):
        found += [(d["_id"], d["_index"]) for d in _mget(t, batch) if d.get("found")]
    return found


def _mget(t: Transport, docs: list[dict[str, str]]) -> list[dict[str, Any]]:
    resp = t.call(lambda: t.es.mget(docs=docs, source=False).body)
    found: list[dict[str, Any]] = resp["docs"]
    return found
