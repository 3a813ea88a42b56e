"""What a run did: its plan, counts, repairs and errors, as plain output, --json and --junit report them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ingest.journal import repaired_counts
from ingest.plan import Plan
from ingest.store.base import ItemError


@dataclass
class RunResult:
    store: str
    plan: Plan
    seen: int
    written: int = 0
    deleted: int = 0
    total: int = 0
    repaired: dict[str, int] = field(default_factory=repaired_counts)
    errors: list[ItemError] = field(default_factory=list)
    defaulted_access: int = 0
    elapsed_s: float = 0.0
    dry_run: bool = False
    access_changes: list[str] = field(default_factory=list)  # aliases re-pointed to follow [roles]
    warnings: list[str] = field(default_factory=list)  # problems after the writes; counts stay true
    strict_refused: bool = False  # --strict and documents rejected: only withdrawals were written
    rebuilt: str = ""  # why everything was rebuilt as --full unasked (records lost, analysis changed), or ""

    @property
    def ok(self) -> bool:
        return not self.plan.problems and not self.errors

    def notes(self) -> list[str]:
        """What the run did besides its plan, one line each, as plain output and --junit say it."""
        notes = []
        if self.rebuilt:
            notes.append(f"{'would be ' if self.dry_run else ''}rebuilt as --full: {self.rebuilt}")
        if any(self.repaired.values()):
            notes.append(
                f"repaired an interrupted run: {self.repaired['orphan_chunks']} orphan chunks deleted, "
                f"{self.repaired['incomplete_documents']} incomplete documents redone"
            )
        return notes

    @property
    def rejected(self) -> int:
        """Rejected inputs, each once, as in --junit: documents and unreadable folders under documents/ with
        a problem record (not inventory.yaml's own), and documents planned but not written (refused by the
        store, or held back by --strict)."""
        sources = {p.source for p in self.plan.problems if p.source.partition("/")[0] == "documents"}
        return len(sources | {item.source for item in self.plan.items if item.action == "rejected"})

    def to_json(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "store": self.store,
            "dry_run": self.dry_run,
            "documents": {
                "seen": self.seen,
                "indexed": plan.count("new") + plan.count("changed") + plan.count("moved"),
                "new": plan.count("new"),
                "changed": plan.count("changed"),
                "moved": plan.count("moved"),
                "unchanged": plan.count("unchanged"),
                "rejected": self.rejected,
                "removed": plan.count("removed"),
                "defaulted_access": self.defaulted_access,
            },
            "chunks": {"written": self.written, "deleted": self.deleted, "total": self.total},
            "problems": [p.to_json() for p in plan.problems],
            "errors": [{"id": e.id, "reason": e.reason} for e in self.errors],
            "overrides": list(plan.overrides),
            "repaired": self.repaired,
            "rebuilt": self.rebuilt or None,
            "access_repaired": self.access_changes,
            "warnings": self.warnings,
            "plan": [item.to_json() for item in plan.items if item.action != "unchanged"],
            "elapsed_s": round(self.elapsed_s, 3),
        }
