#!/usr/bin/env bash
# Finding: when an edit breaks a stored file (front matter no longer YAML, file emptied, junk appended),
# the withdrawal is reported with a false reason: "its file's metadata is refused by this release's readers
# (ambiguous or hidden fields), so its unchanged bytes no longer vouch for ..." although the bytes changed
# and no new release is involved.
# Expected (README, `ingest run` table): a file "that can no longer be read after an edit (broken YAML, a
#   parser that died) withdraws the stored version ... reported with the reason"; the "this release's readers
#   ... unchanged bytes" wording is documented only for "a file whose unchanged bytes a newer release's reader
#   refuses". SPEC: problems name the file, the field and the offending value.
# Happened: the edited-and-broken file gets the newer-release/unchanged-bytes message (problem list and
#   plan reason alike), sending an operator looking for a release change instead of at the edit.
# Exit 1 while the message claims unchanged bytes for a changed file.
set -u
ING=/work/attack12/.venv/bin/ingest; T=$(mktemp -d); trap 'rm -rf $T' EXIT
mkdir -p $T/c/documents
printf -- '---\ndoc_id: memo\nversion: 1\ntitle: Memo\naccess: staff\n---\n\n# Memo\n\nStaff only text.\n' > $T/c/documents/memo.md
$ING run $T/c --store sqlite:///$T/i.sqlite -q >/dev/null 2>&1 || exit 2
sed -i 's/access: staff/access: [staff/' $T/c/documents/memo.md      # an edit that breaks the YAML
out=$($ING run $T/c --store sqlite:///$T/i.sqlite 2>&1); echo "$out" | grep -E "memo" | head -4
if echo "$out" | grep -q "unchanged bytes"; then echo "BUG: an edited file is reported as 'unchanged bytes' refused by 'this release's readers'"; exit 1; fi
echo ok; exit 0
