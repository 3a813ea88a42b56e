#!/usr/bin/env python3
"""Finding: a PDF whose /version info entry is a PDF real number written `2.10` is indexed as
version "2.1" (also `2.0` -> "2", `1.50` -> "1.5"): the citation names a version the file never wrote.

Expected (README, metadata table): version is "required; as written (`5`, `"2026.1"`, `2026.10`)";
"`version` is kept exactly as written (`version: 2026.10` is "2026.10", not 2026.1)"; doc_id and
version "are kept exactly as given ... not stripped to a guessed value". A value that cannot be kept
as written should be refused, like YAML's `!!binary` version ("version: not a string").
Happened: `ingest parse --json` shows version 2.1 (a JSON number), `ingest run` stores v2.1, so
version 2.10 and version 2.1 of a document become the same doc_id@version (promise (a): the answer
traces to the wrong version). Exit 1 while the bug exists.
"""
import subprocess, sys, tempfile, pathlib, json
VENV = "/work/attack12/.venv/bin"
from reportlab.pdfgen import canvas
from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject, FloatObject, TextStringObject
tmp = pathlib.Path(tempfile.mkdtemp(prefix="atk02-")); docs = tmp / "c" / "documents"; docs.mkdir(parents=True)
p = docs / "manual.pdf"
c = canvas.Canvas(str(p)); c.setTitle("Pump Manual"); c.setFont("Helvetica", 11)
for i in range(5): c.drawString(72, 800 - 16 * i, f"Line {i}: the impeller is replaced every two years.")
c.showPage(); c.save()
w = PdfWriter(clone_from=PdfReader(str(p)))
w.add_metadata({"/doc_id": "pump-manual", "/access": "public"})
w.add_metadata({"/version": "QQQQ"})
with open(p, "wb") as f: w.write(f)
raw = p.read_bytes(); assert raw.count(b"/version (QQQQ)") == 1
# same length, so the xref offsets stay right: the info entry is now the PDF real number 2.10
p.write_bytes(raw.replace(b"/version (QQQQ)", b"/version 2.10  "))
store = f"sqlite:///{tmp}/idx.sqlite"
r = subprocess.run([f"{VENV}/ingest", "run", str(tmp / "c"), "--store", store, "--json"], capture_output=True, text=True)
ch = subprocess.run([f"{VENV}/ingest", "chunks", "pump-manual", "--store", store, "--json"], capture_output=True, text=True)
versions = sorted({c["version"] for c in json.loads(ch.stdout)["chunks"]}) if ch.returncode == 0 else []
print("run exit", r.returncode, "stored versions:", versions)
if versions and versions != ["2.10"]:
    print(f"BUG: file writes /version 2.10, store cites version {versions}")
    sys.exit(1)
print("ok: kept as written or refused")
