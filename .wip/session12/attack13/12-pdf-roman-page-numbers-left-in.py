#!/usr/bin/env python3
# WRONG (page furniture left in): roman-numeral page numbers in the footer (i, ii, iii, iv, v, vi, as
# in every manual's front matter) are kept as one-word paragraphs between the pages' text.
import os, sys, tempfile; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _pdfgen import make, parse
W = ["alder", "birch", "cedar", "dogwood", "elm", "fir"]
R = ["i", "ii", "iii", "iv", "v", "vi"]
pages = [[f"Preface sentence {j} about the {W[i-1]} edition, page {i} only." for j in range(5)] for i in range(1, 7)]
p = tempfile.mktemp(suffix=".pdf")
make(p, pages, footer=lambda i, n: R[i-1])
t = parse(p)["text"]
left = [l for l in t.split("\n") if l.strip() in R]
print("footer lines left:", left)
sys.exit(1 if left else 0)
