#!/bin/bash
# LEAK (design gap, beyond the README's word list): an unknown field whose VALUE is a configured access
# label -- classification/visibility/confidentiality/audience: staff -- is ignored silently, so
# access.default ("partner") labels the document; nothing warns that 'staff' was written but not used.
set -u
ING=${ING:-/work/attack13/.venv/bin/ingest}
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT
mkdir -p "$D/c/documents"
printf '[access]\ndefault = "partner"\n' > "$D/c/ingest.toml"
n=0; for k in classification visibility confidentiality audience; do n=$((n+1))
printf -- '---\ndoc_id: d%s\nversion: "1"\ntitle: D%s\n%s: staff\n---\nSecret echidnaword %s.\n' $n $n $k $k > "$D/c/documents/d$n.md"; done
cd "$D"
"$ING" run "$D/c" --store "sqlite:///$D/idx.sqlite" --json > r.json 2>/dev/null
"$ING" search echidnaword --role partner --store "sqlite:///$D/idx.sqlite" --json --top 10 > s.json
python3 - <<'PY'
import json,sys
s=json.load(open("s.json")); r=json.load(open("r.json"))
print("run problems:", r["problems"]); print("partner hits:", [(h["doc_id"],h["access"],h["text"]) for h in s["hits"]])
sys.exit(1 if s["hits"] else 0)
PY
