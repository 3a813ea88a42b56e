"""Retrieval evaluation over ``questions.yaml``: hit@k, MRR, per category, misses and leaks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

from ingest import safe_yaml
from ingest.model import Hit


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
            try:
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
    scored = hits_total = 0
    rr_total = 0.0
    by_cat: dict[str, dict[str, Any]] = {}
    missed, leaks = [], []
    for q in questions:
        try:
            allowed = set(labels_for_role(q.role))
        except Exception as exc:  # an unknown role: name the question that asked for it
            raise QuestionsError(f"question {q.id}: {exc}") from None
        hits = search(q)[:k]
        for hit in hits:
            # A leak is a chunk above the role: a forbidden document the role may read is a
            # wrong answer (below), not a leak.
            if hit.chunk.access not in allowed:
                leaks.append({"id": q.id, "chunk_id": hit.chunk.chunk_id, "doc_id": hit.chunk.doc_id})
        cat = by_cat.setdefault(q.category, {"questions": 0, "hits": 0})
        cat["questions"] += 1
        if not q.relevant:
            # A no-answer question is answered when nothing forbidden came back.
            ok = not any(h.chunk.doc_id in q.forbidden for h in hits)
            cat["hits"] += ok
            if not ok:
                missed.append(q.id)
            continue
        scored += 1
        rank = next((i for i, h in enumerate(hits, start=1) if is_hit(h, q.relevant)), None)
        if rank is None:
            missed.append(q.id)
        else:
            hits_total += 1
            rr_total += 1.0 / rank
            cat["hits"] += 1
    for cat in by_cat.values():
        cat["hit_at_k"] = round(cat["hits"] / cat["questions"], 4) if cat["questions"] else 0.0
        del cat["hits"]
    return EvalResult(
        k=k,
        questions=len(questions),
        hit_at_k=hits_total / scored if scored else 0.0,
        mrr=rr_total / scored if scored else 0.0,
        by_category=dict(sorted(by_cat.items())),
        missed=missed,
        leaks=leaks,
        no_answer=len(questions) - scored,
    )
