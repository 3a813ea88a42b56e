#!/usr/bin/env python3
# LOST: a PDF chapter heading whose text is also that chapter's running header ("Troubleshooting"
# printed at the top of pages 3-5, heading on page 3) is dropped as page furniture; its section vanishes
# and page 3's passages are filed under the previous chapter. Run with /work/attack13/.venv/bin/python.
import os, sys, tempfile; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pdfgen import make, parse
W = ["alder", "birch", "cedar", "dogwood", "elm"]
def fill(i): return [f"Body sentence {j} about the {W[i-1]} pump, written on page {i} only." for j in range(5)]
B = ("Helvetica-Bold", 14)
pages = [[(*B, "Maintenance")] + fill(1), fill(2), [(*B, "Troubleshooting")] + fill(3), fill(4), fill(5)]
p = tempfile.mktemp(suffix=".pdf")
make(p, pages, header=lambda i, n: "Maintenance" if i <= 2 else "Troubleshooting", footer=lambda i, n: str(i))
j = parse(p)
heads = [j["text"][b["start"]:b["end"]] for b in j["blocks"] if b.get("kind") == "heading"]
print("headings:", heads)
sys.exit(0 if "Troubleshooting" in heads else 1)
