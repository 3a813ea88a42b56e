import io, json, subprocess, sys
from reportlab.pdfgen import canvas
from reportlab.lib.pagesizes import A4
from pypdf import PdfReader, PdfWriter
ING="/work/attack13/.venv/bin/ingest"
FILL = ["The pump must be primed before the first start of the engine.",
        "Check the oil level with the dipstick while the engine is cold.",
        "Replace the filter element every five hundred operating hours.",
        "Tighten the drain plug to the value given in the torque table.",
        "Dispose of used oil at an approved collection point only."]
def make(path, pages, header=None, footer=None, meta=None, header_font=("Helvetica",9)):
    """pages: list of lists of (font,size,text) or str lines; header/footer: fn(pageno)->str or None"""
    buf=io.BytesIO(); c=canvas.Canvas(buf, pagesize=A4); n=len(pages)
    for i,lines in enumerate(pages, start=1):
        if header and header(i,n): c.setFont(*header_font); c.drawString(60, 805, header(i,n))
        if footer and footer(i,n): c.setFont(*header_font); c.drawCentredString(297, 30, footer(i,n))
        y=760
        for ln in lines:
            fn,fs,t = ln if isinstance(ln,tuple) else ("Helvetica",11,ln)
            c.setFont(fn,fs); c.drawString(60,y,t); y -= fs*1.5 if fs>11 else 15
            if fs>11: y-=4
        c.showPage()
    c.save()
    w=PdfWriter(clone_from=PdfReader(io.BytesIO(buf.getvalue())))
    w.add_metadata(meta or {"/Title":"Manual","/Keywords":"doc_id=m; version=1; access=public;"})
    w.write(path)
def parse(path):
    r=subprocess.run([ING,"parse",path,"--json"],capture_output=True,text=True)
    return json.loads(r.stdout)
def missing(path, wanted, unwanted=()):
    j=parse(path); t=j.get("text") or ""
    lines=[l.strip() for l in t.split("\n")]
    lost=[w for w in wanted if w not in t]
    left=[u for u in unwanted if any(l==u for l in lines) or u in t]
    return lost,left,t
