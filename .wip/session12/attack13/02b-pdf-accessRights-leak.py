#!/usr/bin/env python3
# LEAK: PDF info key /accessRights (or /DC.accessRights) = staff is ignored (front matter refuses
# `accessRights`), so access.default "partner" labels the PDF and role partner finds it.
# Run with /work/attack13/.venv/bin/python (needs reportlab + pypdf).
import io, json, os, subprocess, sys, tempfile
from reportlab.pdfgen import canvas
from pypdf import PdfReader, PdfWriter
ING = "/work/attack13/.venv/bin/ingest"
d = tempfile.mkdtemp(); os.makedirs(d + "/c/documents")
open(d + "/c/ingest.toml", "w").write('[access]\ndefault = "partner"\n')
buf = io.BytesIO(); c = canvas.Canvas(buf); c.drawString(60, 700, "Confidential wombatword salary bands."); c.showPage(); c.save()
w = PdfWriter(clone_from=PdfReader(io.BytesIO(buf.getvalue())))
w.add_metadata({"/Title": "Bands", "/doc_id": "bands", "/version": "1", "/accessRights": "staff"})
w.write(d + "/c/documents/bands.pdf")
st = f"sqlite:///{d}/idx.sqlite"
v = json.loads(subprocess.run([ING, "validate", d + "/c", "--json"], capture_output=True, text=True).stdout)
subprocess.run([ING, "run", d + "/c", "--store", st, "--json"], capture_output=True, cwd=d)
s = json.loads(subprocess.run([ING, "search", "wombatword", "--role", "partner", "--store", st, "--json"], capture_output=True, text=True, cwd=d).stdout)
print("validate problems:", v["problems"]); print("partner hits:", [(h["doc_id"], h["access"]) for h in s["hits"]])
sys.exit(1 if s["hits"] or not v["problems"] else 0)
