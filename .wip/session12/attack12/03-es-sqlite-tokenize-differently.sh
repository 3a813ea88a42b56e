#!/usr/bin/env bash
# Finding: the two stores split words differently, so a passage one store finds the other never returns.
# Expected (SPEC "Stores"): "The same corpus gives the same chunk IDs and the same records in both stores;
#   filters mean the same; text analysis is the same ([search] language ...); only BM25 scores may differ,
#   and rankings should agree closely." README: both stores analyse text the same way.
# Happened: Elasticsearch's `english` analyzer (standard tokenizer, UAX#29) keeps `settings.yaml`,
#   `Warning:disconnect` and `O'Brien` as ONE token each, SQLite's unicode61 splits them. A chunk saying
#   "Open settings.yaml ..." / "Warning:disconnect the battery" / "Ask O'Brien" is found on SQLite by
#   `settings`, `yaml`, `disconnect`, `warning`, `brien` and on Elasticsearch by none of them (0 hits).
# Exits 1 while the stores disagree. Needs Elasticsearch at $ES (default http://127.0.0.1:9200).
set -u
ES=${ES:-http://127.0.0.1:9200}; ING=/work/attack12/.venv/bin/ingest; P=atk-f03
T=$(mktemp -d); mkdir -p $T/c/documents
cat > $T/c/documents/cfg.md <<'MD'
---
doc_id: cfg
version: 1
title: Configuration notes
access: public
---

# Setup

Open settings.yaml and raise the retries value.

Warning:disconnect the battery first.

Ask O'Brien about it.
MD
cleanup() { for i in $(curl -s "$ES/_cat/indices/$P-*?h=index"); do curl -s -XDELETE "$ES/$i" >/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
$ING run $T/c --store sqlite:///$T/i.sqlite -q >/dev/null 2>&1 || exit 2
$ING run $T/c --store $ES --index-prefix $P -q >/dev/null 2>&1 || exit 2
fail=0
for q in settings yaml disconnect warning brien; do
  s=$($ING search "$q" --store sqlite:///$T/i.sqlite --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["hits"]))')
  e=$($ING search "$q" --store $ES --index-prefix $P --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["hits"]))')
  echo "query '$q': sqlite $s hit(s), elasticsearch $e hit(s)"
  [ "$s" = "$e" ] || fail=1
done
[ $fail = 0 ] && echo "ok: both stores agree" || echo "BUG: the stores analyse text differently"
exit $fail
