#!/bin/bash
# WRONG (false positive): common real-world <meta name> tags reject a fully labelled page as
# "unknown field, named like 'status'/'access'": iOS's apple-mobile-web-app-status-bar-style and
# Highwire/Google Scholar's citation_access_date. The page cannot be indexed without editing its head.
set -u
ING=${ING:-/work/attack13/.venv/bin/ingest}
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
mkdir -p "$D/c/documents"
n=0
for m in 'name="apple-mobile-web-app-status-bar-style" content="black-translucent"' 'name="citation_access_date" content="2024/05/01"'; do
n=$((n+1)); cat > "$D/c/documents/page$n.html" <<H
<!doctype html><html><head><title>Opening hours $n</title>
<meta name="doc_id" content="hours-$n"><meta name="version" content="1"><meta name="access" content="public">
<meta $m>
</head><body><main><p>We open at nine.</p></main></body></html>
H
done
"$ING" validate "$D/c" --json > "$D/v.json"; rc=$?
python3 -c "import json;[print(p['problems']) for p in json.load(open('$D/v.json'))['problems']]"
[ $rc -eq 0 ] || exit 1
