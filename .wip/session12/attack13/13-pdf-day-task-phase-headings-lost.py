#!/usr/bin/env python3
# LOST: numbered headings at the top of each page that use words other than Section/§/Step/Chapter
# ("Day 3", "Task 3", "Phase 3", "Stage 3", "Level 3", "Schedule 3", German "Artikel 3"/"Kapitel 3")
# are taken for the page's number and dropped when N equals the page, e.g. a 6-day course, one day a page.
import os, sys, tempfile; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pdfgen import make, parse
W = ["alder", "birch", "cedar", "dogwood", "elm", "fir"]
B = ("Helvetica-Bold", 14)
bad = 0
for word in ["Day", "Task", "Phase", "Schedule", "Artikel"]:
    pages = [[(*B, f"{word} {i}")] + [f"Plan item {j} for the {W[i-1]} group, only on page {i}." for j in range(5)] for i in range(1, 7)]
    p = tempfile.mktemp(suffix=".pdf"); make(p, pages, footer=lambda i, n: f"Page {i} of {n}")
    lines = [l.strip() for l in parse(p)["text"].split("\n")]
    kept = [f"{word} {i}" for i in range(1, 7) if f"{word} {i}" in lines]
    print(f"{word}: kept {kept}"); bad += len(kept) < 6
sys.exit(1 if bad else 0)
