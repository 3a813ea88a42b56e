#!/bin/bash
# LEAK: <meta name="DC.accessRights" content="staff"> (Dublin Core's own access term) is ignored
# in HTML, although the same key in front matter is refused ("named like 'access'"): HTML names seem
# case-folded before camelCase words are split, so access.default ("partner") labels the page.
set -u
ING=${ING:-/work/attack13/.venv/bin/ingest}
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
mkdir -p "$D/c/documents"
printf '[access]\ndefault = "partner"\n' > "$D/c/ingest.toml"
cat > "$D/c/documents/hr.html" <<'H'
<html><head><title>HR salary bands</title>
<meta name="doc_id" content="hr-bands"><meta name="version" content="1">
<meta name="DC.accessRights" content="staff"><meta name="dcterms.accessRights" content="staff">
</head><body><main><p>Confidential quokkaword salary bands.</p></main></body></html>
H
cd "$D"
"$ING" validate "$D/c" --json > v.json
"$ING" run "$D/c" --store "sqlite:///$D/idx.sqlite" --json > r.json 2>/dev/null
"$ING" search quokkaword --role partner --store "sqlite:///$D/idx.sqlite" --json > s.json
python3 - <<'PY'
import json,sys
v=json.load(open("v.json")); s=json.load(open("s.json"))
print("validate problems:", v["problems"])
print("partner hits:", [(h["doc_id"],h["access"]) for h in s["hits"]])
sys.exit(1 if s["hits"] or not v["problems"] else 0)
PY
