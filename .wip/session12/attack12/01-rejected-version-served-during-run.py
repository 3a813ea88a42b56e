#!/usr/bin/env python3
"""Finding: a version that the run rejects (two versions of one doc_id in force on the same day)
is searchable while the run is going: readers see memo@1 and memo@2 side by side, both "in force".

Expected (SPEC "Problems": "a rejected document writes nothing"; README: "two versions of one doc_id
in force on the same day" is a problem, and "Validation keeps a superseded document out of force on
the days its replacement is in force, so the date filter alone never serves the two side by side";
promise (b): nobody ever sees a passage out of date).
Happened: chunks are written as the workers deliver documents and only deleted after the cross-document
checks reject them; during that window (seconds on a 1,500-file corpus; until the next run if the run is
SIGKILLed then) `search` on SQLite returns chunks of memo@2 next to memo@1. Exit 1 while the bug exists.
Usage: findings/01-...py [STORE_URL]  (default: a temp SQLite file)
"""
import os, subprocess, sys, tempfile, time, pathlib
VENV = "/work/attack12/.venv/bin"
tmp = pathlib.Path(tempfile.mkdtemp(prefix="atk01-"))
store = sys.argv[1] if len(sys.argv) > 1 else f"sqlite:///{tmp}/idx.sqlite"
prefix = ["--index-prefix", "atk-f01"] if store.startswith("http") else []
docs = tmp / "c" / "documents"; docs.mkdir(parents=True)
def md(name, doc_id, version, body="zebra memo text"):
    (docs / name).write_text(f"---\ndoc_id: {doc_id}\nversion: \"{version}\"\ntitle: Memo\naccess: public\n---\n\n# Memo\n\n{body} v{version}.\n")
md("memo1.md", "memo", "1")
ing = [f"{VENV}/ingest"]
subprocess.run(ing + ["run", str(tmp / "c"), "--store", store, "-q"] + prefix, check=True, capture_output=True)
md("aaa-memo2.md", "memo", "2")           # no dates: in force every day, like memo@1 -> must be rejected
for i in range(1500):
    (docs / f"zz{i:04d}.md").write_text(f"---\ndoc_id: filler-{i}\nversion: 1\ntitle: F{i}\naccess: public\n---\n\n# F\n\n" + "lorem ipsum dolor " * 300 + "\n")
sys.path.insert(0, "/work/main")
import ingest
run = subprocess.Popen(ing + ["run", str(tmp / "c"), "--store", store, "-q"] + prefix, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
seen = set()
with ingest.open_store(store, prefix[1] if prefix else None, create=False) as index:
    while run.poll() is None:
        try:
            vs = {h.chunk.version for h in index.search("zebra memo", doc_id="memo", as_of="today", top=10)}
        except Exception as e:  # noqa
            vs = set()
        if "2" in vs and "1" in vs:
            seen.add("both")
        time.sleep(0.02)
out = run.stdout.read()
print(out.strip().splitlines()[-3:] if out else "")
if store.startswith("http"):
    subprocess.run(["bash", "-c", "for i in $(curl -s 'http://127.0.0.1:9200/_cat/indices/atk-f01-*?h=index'); do curl -s -XDELETE http://127.0.0.1:9200/$i >/dev/null; done"])
if "both" in seen:
    print("BUG: during the run, search served memo@1 and the rejected memo@2 side by side (both in force today)")
    sys.exit(1)
print("ok: the rejected version was never searchable")
