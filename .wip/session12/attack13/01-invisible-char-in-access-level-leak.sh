#!/bin/bash
# LEAK: an access-like field name with an invisible character inside a word
# (acc<ZWSP>ess_level, acc<WJ>ess_level, doc_st<ZWSP>atus) is ignored as an unknown field,
# so access.default ("partner") labels a document its author marked staff.
# (acc<ZWSP>ess alone and access<ZWSP>_level ARE refused.)
set -u
ING=${ING:-/work/attack13/.venv/bin/ingest}
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
mkdir -p "$D/c/documents"
printf '[access]\ndefault = "partner"\n' > "$D/c/ingest.toml"
printf -- '---\ndoc_id: salaries\nversion: "1"\ntitle: Salary bands\n"acc\u200bess_level": staff\n---\nConfidential salary bands zebraword for staff only.\n' > "$D/c/documents/salaries.md"
"$ING" validate "$D/c" --json > "$D/v.json"; echo "validate rc=$?"
cd "$D"
"$ING" run "$D/c" --store "sqlite:///$D/idx.sqlite" --json > "$D/r.json" 2>/dev/null
"$ING" search zebraword --role partner --store "sqlite:///$D/idx.sqlite" --json > "$D/s.json"
python3 - "$D" <<'PY'
import json,sys
d=sys.argv[1]
v=json.load(open(d+"/v.json")); s=json.load(open(d+"/s.json"))
print("validate problems:", v["problems"])
print("partner hits:", [(h["doc_id"],h["access"]) for h in s["hits"]])
sys.exit(1 if s["hits"] or not v["problems"] else 0)
PY
