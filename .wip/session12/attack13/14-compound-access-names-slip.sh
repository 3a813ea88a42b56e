#!/bin/bash
# LEAK: access/status names written as one lower-case word slip through the "named like" check
# (docaccess, myaccess, docstatus; front matter and inventory.yaml) while accesslevel/accessrole are refused,
# so access.default ("partner") labels a document its author marked staff.
set -u
ING=${ING:-/work/attack13/.venv/bin/ingest}
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
mkdir -p "$D/c/documents"
printf '[access]\ndefault = "partner"\n' > "$D/c/ingest.toml"
printf -- '---\ndoc_id: a\nversion: "1"\ntitle: A\ndocaccess: staff\n---\nSecret platypusword one.\n' > "$D/c/documents/a.md"
printf -- '---\ndoc_id: b\nversion: "1"\ntitle: B\n---\nSecret platypusword two.\n' > "$D/c/documents/b.md"
printf 'b.md: {myaccess: staff}\n' > "$D/c/inventory.yaml"
cd "$D"
"$ING" validate "$D/c" --json > v.json
"$ING" run "$D/c" --store "sqlite:///$D/idx.sqlite" --json > r.json 2>/dev/null
"$ING" search platypusword --role partner --store "sqlite:///$D/idx.sqlite" --json > s.json
python3 - <<'PY'
import json,sys
v=json.load(open("v.json")); s=json.load(open("s.json"))
print("validate problems:", v["problems"]); print("partner hits:", [(h["doc_id"],h["access"]) for h in s["hits"]])
sys.exit(1 if s["hits"] else 0)
PY
