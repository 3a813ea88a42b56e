"""JUnit XML reports (``--junit FILE``) so CI systems show documents and questions natively: owns the XML.

One test case per document (``validate``, ``run``) or per question (``eval``); a rejected
document, a missed question or a leak is a ``<failure>`` carrying its reasons. Written with
xml.etree, so names with any characters stay well-formed XML (control characters, which XML 1.0
cannot carry at all, are shown as escapes).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ingest.model import DocumentProblems

if TYPE_CHECKING:
    from ingest.evaluate import EvalResult
    from ingest.pipeline import RunResult

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(value: str) -> str:
    return _NOT_XML.sub(lambda m: repr(m.group())[1:-1], value)


@dataclass(frozen=True)
class Case:
    name: str
    classname: str
    failure: tuple[str, ...] = ()  # reasons; empty: passed
    time_s: float = 0.0


@dataclass
class Suite:
    name: str
    cases: list[Case] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # suite-level messages (e.g. a failed gate)
    out: list[str] = field(default_factory=list)  # suite-level information (e.g. a run that rebuilt everything)

    def add(self, name: str, classname: str, reasons: Iterable[str] = ()) -> None:
        self.cases.append(Case(name, classname, tuple(reasons)))

    def to_xml(self) -> ET.Element:
        failures = sum(1 for c in self.cases if c.failure)
        suite = ET.Element(
            "testsuite", name=self.name, tests=str(len(self.cases)), failures=str(failures), errors="0", skipped="0"
        )
        for case in self.cases:
            element = ET.SubElement(
                suite,
                "testcase",
                name=_xml_text(case.name),
                classname=_xml_text(case.classname),
                time=f"{case.time_s:.3f}",
            )
            if case.failure:
                failure = ET.SubElement(element, "failure", message=_xml_text(case.failure[0][:500]), type="ingest")
                failure.text = _xml_text("\n".join(case.failure))
        if self.out:
            ET.SubElement(suite, "system-out").text = _xml_text("\n".join(self.out))
        if self.notes:
            ET.SubElement(suite, "system-err").text = _xml_text("\n".join(self.notes))
        return suite


def write(path: Path, *suites: Suite) -> None:
    root = ET.Element("testsuites", name="ingest")
    for suite in suites:
        root.append(suite.to_xml())
    root.set("tests", str(sum(len(s.cases) for s in suites)))
    root.set("failures", str(sum(1 for s in suites for c in s.cases if c.failure)))
    tree = ET.ElementTree(root)
    ET.indent(tree)
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    tree.write(path, encoding="utf-8", xml_declaration=True)


def add_problems(suite: Suite, problems: Iterable[DocumentProblems], classname: str) -> None:
    """One failed case per rejected document, named by its source (and doc_id when it has one)."""
    for p in problems:
        label = p.source + (f" ({p.doc_id})" if p.doc_id else "")
        suite.add(label, classname, list(p.problems) or ["rejected"])


def documents_suite(name: str, valid: Iterable[tuple[str, str]], problems: Iterable[DocumentProblems]) -> Suite:
    """``valid``: (source, key) of every accepted document; ``problems``: the rejected ones."""
    suite = Suite(name)
    for source, _key in valid:
        suite.add(source, f"ingest.{name}", ())
    add_problems(suite, problems, f"ingest.{name}")
    return suite


def questions_suite(result: EvalResult, gate: Iterable[str] = ()) -> Suite:
    """One case per question; a failed gate goes to the suite's system-err (cases stay one per question)."""
    suite = Suite("eval")
    for outcome in result.outcomes:
        suite.add(f"{outcome.id}", f"ingest.eval.{outcome.category}", outcome.reasons)
    suite.notes.extend(gate)
    return suite


def run_suite(result: RunResult) -> Suite:
    """One case per document the run saw: rejected ones and those with chunks the store refused fail."""
    suite = Suite("run")
    refused: dict[str, list[str]] = {}
    # Only the refused IDs are looked up: a map of every written chunk would grow with the corpus
    # (this suite is built on every run, with or without --junit).
    wanted = {e.id for e in result.errors}
    chunk_source = (
        {c.chunk_id: doc.source for doc, chunks, _ in result.plan.to_write for c in chunks if c.chunk_id in wanted}
        if wanted
        else {}
    )
    for e in result.errors:
        refused.setdefault(chunk_source.get(e.id, "(unknown document)"), []).append(
            f"chunk {e.id} refused by the store: {e.reason}"
        )
    # a document with a problem record is one failed case (below), never a passing one too; a removed or
    # kept item is a stored version, not a document the run saw (a kept one's file is rejected, or lies in
    # a folder that could not be read: that problem record is its case), so the cases are the counts'
    with_problems = {p.source for p in result.plan.problems}
    for item in result.plan.items:
        if item.action in ("removed", "kept") or item.source in with_problems:
            continue
        reasons = refused.pop(item.source, [])
        if item.action == "rejected" and not reasons:
            reasons = [item.reason or "rejected"]
        suite.add(item.source, f"ingest.run.{item.action}", reasons)
    add_problems(suite, result.plan.problems, "ingest.run.rejected")
    for source, reasons in refused.items():
        suite.add(source, "ingest.run.refused", reasons)
    suite.out.extend(result.notes())
    return suite
