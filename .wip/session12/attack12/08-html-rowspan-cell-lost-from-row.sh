#!/usr/bin/env bash
# Finding: an HTML table cell with rowspan is read only into its first row; the rows it spans lose it, so
#   the passage no longer says which row a value belongs to.
#   <tr><td rowspan=2>Gold</td><td>boats under 6 m</td><td>5%</td></tr><tr><td>boats over 6 m</td><td>7%</td></tr>
#   -> "Gold | boats under 6 m | 5%" and "boats over 6 m | 7%" (the tier is gone, the columns shift left).
# Expected (README "What each format keeps": tables are kept, "row by row"; promise (a): an answer traces to
#   the exact passage - a row read with its columns shifted states a different fact).
# Happened: the second row has 2 cells instead of 3 and no tier. Exit 1 while the bug exists.
set -u
ING=/work/attack12/.venv/bin/ingest; T=$(mktemp -d); trap 'rm -rf $T' EXIT; mkdir -p $T/c/documents
cat > $T/c/documents/r.html <<'H'
<!doctype html><html><head><title>Rates</title><meta name="doc_id" content="r"><meta name="version" content="1"><meta name="access" content="public"></head>
<body><main><h1>Dealer rates</h1><table><tr><th>Tier</th><th>Boat</th><th>Rate</th></tr>
<tr><td rowspan="2">Gold</td><td>boats under 6 m</td><td>5%</td></tr><tr><td>boats over 6 m</td><td>7%</td></tr>
<tr><td>Silver</td><td>any boat</td><td>3%</td></tr></table></main></body></html>
H
txt=$($ING parse $T/c/documents/r.html --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["text"])')
echo "$txt"
line=$(echo "$txt" | grep "over 6 m")
n=$(echo "$line" | awk -F'|' '{print NF}')
if [ "$n" != 3 ]; then echo "BUG: the row '$line' has $n cells, the table has 3 columns (rowspan cell 'Gold' dropped)"; exit 1; fi
echo ok
