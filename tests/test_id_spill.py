"""The run's chunk-ID spill: what a first build keeps per written document until its record is
written. IDs and held chunks read back exactly, whether still waiting in memory or already in the
file, across the flush boundary, and for a document without chunks."""

from __future__ import annotations

from ingest import sync
from ingest.model import chunk_id
from tests.helpers import make_chunk


def test_ids_and_held_chunks_read_back_across_flushes(monkeypatch) -> None:
    monkeypatch.setattr(sync, "_SPILL_FLUSH", 64)  # a few documents per write to the file
    spill = sync._IdSpill()
    kept = []
    for n in range(40):
        ids = [chunk_id(f"doc-{n}", "1", i, i + 1) for i in range(n % 5)]
        kept.append((ids, spill.keep(ids)))
    chunks = [make_chunk(doc_id="held", position=i, text=f"text {i}") for i in range(3)]
    held = spill.hold(chunks)
    more = [chunk_id("after", "1", 0, 1)]
    after = spill.keep(more)  # still waiting in memory when read
    assert [written.ids() for _, written in kept] == [ids for ids, _ in kept]
    assert isinstance(held, sync._HeldChunks)
    assert held.chunks() == chunks and held.ids() == [c.chunk_id for c in chunks]
    assert after.ids() == more
    assert len(kept[0][1]) == 0 and kept[0][1].ids() == []


def test_ids_of_another_shape_stay_in_memory() -> None:
    spill = sync._IdSpill()
    odd = spill.keep(["not-a-hex-id"])
    assert odd.ids() == ["not-a-hex-id"] and not isinstance(odd, sync._SpilledChunks)
