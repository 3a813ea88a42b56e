"""A field given twice in a PDF is refused naming where each value was found (outside pass: two
`access=` in /Keywords were reported as one "in the document information")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from reportlab.pdfgen import canvas


def write_pdf(path: Path, keywords: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pdf = canvas.Canvas(str(path))
    pdf.setTitle("A test document")
    pdf.setKeywords(keywords)
    pdf.drawString(72, 720, "Some text on the page.")
    pdf.save()


@pytest.mark.parametrize(
    ("keywords", "expected"),
    [
        ("doc_id=dup; version=1; access=public; access=staff", "'public' in /Keywords and 'staff' in /Keywords"),
        ("doc_id=dup; version=1; access=public; Access=staff", "'public' in /Keywords and 'staff' in /Keywords"),
        ("doc_id=dup; version=1; title=Another; access=public", "'A test document' in the document information"),
    ],
)
def test_validate_names_where_each_value_was_found(tmp_path, keywords, expected):
    corpus = tmp_path / "corpus"
    write_pdf(corpus / "documents" / "dup.pdf", keywords)
    write_pdf(corpus / "documents" / "ok.pdf", "doc_id=ok; version=1; access=public")

    done = subprocess.run(
        [sys.executable, "-m", "ingest.cli", "validate", str(corpus), "--json"], capture_output=True, text=True
    )

    assert done.returncode == 1, done.stdout + done.stderr
    [record] = json.loads(done.stdout)["problems"]
    assert record["source"] == "documents/dup.pdf"
    [problem] = record["problems"]
    assert "PDF metadata gives " in problem and expected in problem, problem
