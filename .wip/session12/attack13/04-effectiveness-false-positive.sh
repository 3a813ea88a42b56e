#!/bin/bash
# WRONG (false positive): front matter `effectiveness: high` (a different word) is refused as
# "named like 'effective_from'"; also `effective_altruism: no` reports the value as 'False', not as written.
ING=${ING:-/work/attack13/.venv/bin/ingest}
D=$(mktemp -d); trap 'rm -rf "$D"' EXIT; mkdir -p "$D/c/documents"
printf -- '---\ndoc_id: trial\nversion: "1"\ntitle: Trial\naccess: public\neffectiveness: high\n---\nThe drug works.\n' > "$D/c/documents/trial.md"
"$ING" validate "$D/c" --json > "$D/v.json"; rc=$?
python3 -c "import json;print(json.load(open('$D/v.json'))['problems'])"
[ $rc -eq 0 ] || exit 1
