"""What a run records in the store's meta at its end — how the store was built, the labels and roles
searches read back, the scan memo, the versions withdrawn — and the chunk total after a plan.

Pure functions of the scan, the plan and the settings: the pipeline writes what they give, and the
no-op check of an unchanged Elasticsearch run (``store/elasticsearch/unchanged_check.py``) compares
them with what is recorded, without importing the writing side of a run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime

from ingest.corpus import CorpusScan
from ingest.journal import JOURNAL, SCAN_MEMO, TOMBSTONES, WITHDRAWN_ACCESS, tombstones_json
from ingest.model import DocumentRecord
from ingest.parse import PARSER_VERSION
from ingest.plan import Plan
from ingest.run_result import RunResult
from ingest.settings import ChunkSettings, Settings, roles_to_meta


def end_of_run_meta(
    settings: Settings, chunking: ChunkSettings, analysis: str, scan: CorpusScan, result: RunResult
) -> dict[str, str]:
    """What a run records in the store's meta at its end (written only when it differs, see meta_differs)."""
    return {
        **build_meta(settings, chunking, analysis),
        JOURNAL: "",
        SCAN_MEMO: memo_json(scan, result),
        **withdrawn_meta(result.plan),
    }


def withdrawn_meta(plan: Plan) -> dict[str, str]:
    """The withdrawn versions a run leaves remembered: their bytes (tombstones) and their labels."""
    return {
        TOMBSTONES: tombstones_json(plan.tombstones),
        WITHDRAWN_ACCESS: tombstones_json(plan.remembered_access()),
    }


def meta_differs(current: Mapping[str, str], updates: Mapping[str, str]) -> bool:
    """Whether writing ``updates`` would change the recorded meta (the build time alone does not count)."""
    return any(current.get(k) != v for k, v in updates.items() if k != "built_at")


def total_after(stored: list[DocumentRecord], plan: Plan) -> int:
    """Chunks in the store after the plan: the records' chunk counts (no count request needed)."""
    live = {r.key: r.chunk_count for r in stored}
    for item in plan.items:
        if item.action in ("new", "changed", "moved"):
            live[item.key] = item.write
        elif item.action == "removed":
            live.pop(item.key, None)
    return sum(live.values())


def memo_json(scan: CorpusScan, result: RunResult) -> str:
    problems = sorted({p.source for p in result.plan.problems})
    return json.dumps(
        {
            "fingerprint": scan.fingerprint,
            "listing": scan.listing,
            "defaulted": list(scan.defaulted_sources),
            "problems": problems,
            "rejected": [
                [r.source, r.sha256, r.problems.doc_id, r.key, list(r.problems.problems)]
                for r in scan.remembered_rejections
            ],
        },
        separators=(",", ":"),
    )


def roles_record(settings: Settings) -> dict[str, str]:
    """The labels and roles a run records before anything else (what `search` reads back)."""
    return {
        key: value for key, value in build_meta(settings, ChunkSettings(), "").items() if key in ("labels", "roles")
    }


def build_meta(settings: Settings, chunking: ChunkSettings, analysis: str) -> dict[str, str]:
    """What the store records about how it was built (and the roles `search` reads back)."""
    return {
        "analysis": analysis,
        "chunker": chunking.chunker,
        "size": str(chunking.size),
        "overlap": str(chunking.overlap),
        "parser_version": PARSER_VERSION,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "labels": json.dumps(list(settings.labels)),
        "roles": roles_to_meta(settings.roles),
    }
