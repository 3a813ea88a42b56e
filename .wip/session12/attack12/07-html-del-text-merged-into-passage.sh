#!/usr/bin/env bash
# Finding: HTML <del> (text the page marks as removed) is indexed, glued to its <ins> replacement:
#   <p>Warranty lasts <del>24</del><ins>36</ins> months.</p>  ->  "Warranty lasts 2436 months."
# Expected (promise (b) and SPEC "What it is": citable passages, nobody sees a passage out of date; the
#   HTML reader keeps "the page's main content"): the passage should say what the page says now,
#   "Warranty lasts 36 months." (or at least keep the two values apart, never a new number).
# Happened: the parsed text, and so the chunk and every search answer, states a warranty of "2436 months";
#   a search for "24 months" style questions is answered with retracted text.
# Exit 1 while the bug exists.
set -u
ING=/work/attack12/.venv/bin/ingest; T=$(mktemp -d); trap 'rm -rf $T' EXIT; mkdir -p $T/c/documents
cat > $T/c/documents/w.html <<'H'
<!doctype html><html><head><title>Warranty</title><meta name="doc_id" content="w"><meta name="version" content="2"><meta name="access" content="public"></head>
<body><main><h1>Warranty</h1><p>Warranty lasts <del>24</del><ins>36</ins> months from the sale.</p></main></body></html>
H
txt=$($ING parse $T/c/documents/w.html --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["text"])')
echo "parsed: $txt"
if echo "$txt" | grep -qE "2436|24 ?36"; then echo "BUG: deleted text indexed and merged with its replacement"; exit 1; fi
echo ok
