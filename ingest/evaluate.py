"""Retrieval evaluation, owned here: ``questions.yaml`` read and checked; hit@k, MRR, per category,
misses, leaks and the CI gates."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from ingest import safe_yaml
from ingest.model import Hit
from ingest.settings import SettingsError


class QuestionsError(Exception):
    """questions.yaml is malformed (exit 2)."""


@dataclass(frozen=True)
class Relevant:
    doc_id: str
    version: str
    section: str


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    category: str
    role: str = "public"
    as_of: date | None = None
    relevant: tuple[Relevant, ...] = ()
    forbidden: tuple[str, ...] = ()


def load_questions(path: Path) -> list[Question]:
    try:
        data = safe_yaml.load(Path(path).read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise QuestionsError(f"{path}: not valid YAML: {safe_yaml.describe(exc)}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionsError(f"{path}: cannot read questions: {exc}") from None
    if isinstance(data, Mapping) and "questions" in data:
        data = data["questions"]
    if not isinstance(data, list):
        raise QuestionsError(f"{path}: expected a list of questions")
    questions, seen = [], set()
    for n, item in enumerate(data, start=1):
        where = f"{path}: question #{n}"
        if not isinstance(item, Mapping):
            raise QuestionsError(f"{where}: not a mapping")
        missing = [k for k in ("id", "question", "category") if not item.get(k)]
        if missing:
            raise QuestionsError(f"{where}: missing {', '.join(missing)}")
        qid = str(item["id"])
        if qid in seen:
            raise QuestionsError(f"{where}: duplicate id {qid!r}")
        seen.add(qid)
        as_of = item.get("as_of")
        if as_of is not None and not isinstance(as_of, (str, date)):
            raise QuestionsError(f"{where} ({qid}): as_of {as_of!r} is not a YYYY-MM-DD date")
        if isinstance(as_of, str):
            try:  # exactly YYYY-MM-DD: fromisoformat would read "20250101", "none" is no date
                if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", as_of):
                    raise ValueError(as_of)
                as_of = date.fromisoformat(as_of)
            except ValueError:
                raise QuestionsError(f"{where} ({qid}): as_of {as_of!r} is not a YYYY-MM-DD date") from None
        relevant = []
        for rel in item.get("relevant") or []:
            if not isinstance(rel, Mapping) or "doc_id" not in rel:
                raise QuestionsError(f"{where}: relevant entries need doc_id, version, section")
            relevant.append(Relevant(str(rel["doc_id"]), str(rel.get("version", "")), str(rel.get("section", ""))))
        questions.append(
            Question(
                id=qid,
                question=str(item["question"]),
                category=str(item["category"]),
                role=str(item.get("role") or "public"),
                as_of=as_of,
                relevant=tuple(relevant),
                forbidden=tuple(str(d) for d in item.get("forbidden") or ()),
            )
        )
    return questions


def is_hit(hit: Hit, relevant: Sequence[Relevant]) -> bool:
    chunk = hit.chunk
    for rel in relevant:
        if chunk.doc_id != rel.doc_id or (rel.version and chunk.version != rel.version):
            continue
        if not rel.section or rel.section in chunk.sections:
            return True
    return False


@dataclass(frozen=True)
class QuestionOutcome:
    """One question's result (a JUnit test case): passed, or why not."""

    id: str
    category: str
    role: str
    rank: int | None  # rank of the first relevant hit; None when missed or a no-answer question
    passed: bool
    reasons: tuple[str, ...] = ()


@dataclass
class EvalResult:
    k: int
    questions: int
    hit_at_k: float
    mrr: float
    by_category: dict[str, dict[str, Any]]
    missed: list[str]
    leaks: list[dict[str, str]]
    no_answer: int = 0  # questions without relevant entries (not in hit@k or MRR)
    outcomes: list[QuestionOutcome] = field(default_factory=list)
    returned: int = 0  # hits returned over all questions: 0 means an empty store or a wrong target

    def to_json(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "questions": self.questions,
            "hit_at_k": round(self.hit_at_k, 4),
            "mrr": round(self.mrr, 4),
            "by_category": self.by_category,
            "missed": self.missed,
            "leaks": self.leaks,
        }


def evaluate(
    questions: Sequence[Question],
    search: Callable[[Question], list[Hit]],
    labels_for_role: Callable[[str], Sequence[str]],
    k: int = 5,
) -> EvalResult:
    """``search(question)`` returns the top k for the question's role and as-of date."""
    by_cat: dict[str, dict[str, Any]] = {}
    leaks: list[dict[str, str]] = []
    missed: list[str] = []
    outcomes: list[QuestionOutcome] = []
    returned = 0
    for q in questions:
        try:
            allowed = set(labels_for_role(q.role))
        except (ValueError, LookupError, SettingsError) as exc:  # an unknown role: name the question asking
            raise QuestionsError(f"question {q.id}: {exc}") from None
        hits = search(q)[:k]
        returned += len(hits)
        outcome, found_leaks = judge(q, hits, allowed, k)
        outcomes.append(outcome)
        leaks.extend(found_leaks)
        # A no-answer question is answered when nothing forbidden came back; leaks do not make it a miss.
        missed_it = outcome.rank is None if q.relevant else bool(_forbidden(q, hits))
        if missed_it:
            missed.append(q.id)
        cat = by_cat.setdefault(q.category, {"questions": 0, "hits": 0})
        cat["questions"] += 1
        cat["hits"] += not missed_it
    for cat in by_cat.values():
        cat["hit_at_k"] = round(cat["hits"] / cat["questions"], 4) if cat["questions"] else 0.0
        del cat["hits"]
    ranks = [o.rank for o, q in zip(outcomes, questions, strict=True) if q.relevant]
    scored = len(ranks)
    return EvalResult(
        k=k,
        questions=len(questions),
        hit_at_k=sum(1 for r in ranks if r is not None) / scored if scored else 0.0,
        mrr=sum(1.0 / r for r in ranks if r is not None) / scored if scored else 0.0,
        by_category=dict(sorted(by_cat.items())),
        missed=missed,
        leaks=leaks,
        no_answer=len(questions) - scored,
        outcomes=outcomes,
        returned=returned,
    )


def _forbidden(q: Question, hits: Sequence[Hit]) -> list[str]:
    return sorted({h.chunk.doc_id for h in hits if h.chunk.doc_id in q.forbidden})


def judge(q: Question, hits: Sequence[Hit], allowed: set[str], k: int) -> tuple[QuestionOutcome, list[dict[str, str]]]:
    """One question's outcome (rank, passed, reasons) and its leaks."""
    leaks: list[dict[str, str]] = []
    reasons: list[str] = []
    for hit in hits:
        # A leak is a chunk above the role: a forbidden document the role may read is a
        # wrong answer (below), not a leak.
        if hit.chunk.access not in allowed:
            leaks.append({"id": q.id, "chunk_id": hit.chunk.chunk_id, "doc_id": hit.chunk.doc_id})
            reasons.append(
                f"LEAK: chunk {hit.chunk.chunk_id} of {hit.chunk.doc_id} (access {hit.chunk.access}) "
                f"returned to role {q.role}"
            )
    if not q.relevant:
        forbidden = _forbidden(q, hits)
        if forbidden:
            reasons.append(f"forbidden document(s) returned: {', '.join(forbidden)}")
        return QuestionOutcome(q.id, q.category, q.role, None, not reasons, tuple(reasons)), leaks
    rank = next((i for i, h in enumerate(hits, start=1) if is_hit(h, q.relevant)), None)
    if rank is None:
        wanted = ", ".join(f"{r.doc_id}@{r.version or '*'} § {r.section or '*'}" for r in q.relevant)
        got = ", ".join(f"{h.chunk.doc_id}@{h.chunk.version} § {h.chunk.section}" for h in hits) or "nothing"
        reasons.insert(0, f"missed: no relevant passage in the top {k} (wanted {wanted}; got {got})")
    return QuestionOutcome(q.id, q.category, q.role, rank, not reasons, tuple(reasons)), leaks


def gate_failures(result: EvalResult, min_hit_at_k: float | None = None, max_leaks: int = 0) -> list[str]:
    """Why this evaluation fails its gate (empty: it passes). An evaluation whose searches all
    came back empty never passes: that is an empty store or a wrong target, not a good score."""
    failures = []
    if result.questions and result.returned == 0:
        failures.append("no question got any passage back: the store is empty or this is the wrong store/prefix")
    if min_hit_at_k is not None and result.hit_at_k < min_hit_at_k:
        failures.append(f"hit@{result.k} {result.hit_at_k:.3f} is below --min-hit-at-k {min_hit_at_k:g}")
    if len(result.leaks) > max_leaks:
        failures.append(f"{len(result.leaks)} leak(s), more than --max-leaks {max_leaks}")
    return failures
