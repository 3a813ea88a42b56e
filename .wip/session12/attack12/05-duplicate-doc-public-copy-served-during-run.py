#!/usr/bin/env python3
"""Finding (LEAK): a staff document and a copy of it relabelled `public` under the same doc_id@version
must both be rejected ("two files with the same doc_id and version (both rejected)", SPEC Problems;
"a rejected document writes nothing"), yet while the run is going the public copy's chunks are written
to the public index and the `public` role reads the staff text. A run SIGKILLed in that window leaves
them readable until the next run.

Expected: the public role never sees secret@1 (SPEC "Roles and filters", promise (b)).
Happened: chunks are written as workers deliver each file; the duplicate check runs afterwards and deletes
them again; a reader polling `Index.search(role="public")` during the run gets ('secret','1','public').
Exit 1 while the bug exists.  Usage: 05-...py [STORE_URL]  (default: a temp SQLite file; ES: http://127.0.0.1:9200)
"""
import subprocess, sys, tempfile, time, pathlib
sys.path.insert(0, "/work/main"); import ingest
VENV = "/work/attack12/.venv/bin"
tmp = pathlib.Path(tempfile.mkdtemp(prefix="atk05-"))
store = sys.argv[1] if len(sys.argv) > 1 else f"sqlite:///{tmp}/idx.sqlite"
prefix = "atk-f05" if store.startswith("http") else None
pargs = ["--index-prefix", prefix] if prefix else []
docs = tmp / "c" / "documents"; docs.mkdir(parents=True)
def md(name, doc_id, access, body):
    (docs / name).write_text(f"---\ndoc_id: {doc_id}\nversion: 1\ntitle: {doc_id}\naccess: {access}\n---\n\n# T\n\n{body}\n")
md("hello.md", "hello", "public", "public hello text")
subprocess.run([f"{VENV}/ingest", "run", str(tmp / "c"), "--store", store, "-q"] + pargs, check=True, capture_output=True)
md("aaa-salaries.md", "salaries", "staff", "salary bands zebra confidential")
md("aab-salaries-copy.md", "salaries", "public", "salary bands zebra confidential")   # copied, relabelled
for i in range(1500):
    md(f"zz{i:04d}.md", f"filler-{i}", "public", "lorem ipsum dolor " * 300)
run = subprocess.Popen([f"{VENV}/ingest", "run", str(tmp / "c"), "--store", store, "-q"] + pargs,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
seen = set()
with ingest.open_store(store, prefix, create=False) as ix:
    while run.poll() is None:
        try:
            seen |= {(h.chunk.doc_id, h.chunk.access) for h in ix.search("salary bands zebra", role="public", top=10)}
        except Exception:
            pass
        time.sleep(0.02)
print(run.stdout.read().strip().splitlines()[-4:])
if prefix:
    subprocess.run(["bash", "-c", f"for i in $(curl -s 'http://127.0.0.1:9200/_cat/indices/{prefix}-*?h=index'); do curl -s -XDELETE http://127.0.0.1:9200/$i >/dev/null; done"])
if any(d == "salaries" for d, _ in seen):
    print("BUG: role public read salaries@1 (rejected duplicate of a staff document) during the run:", seen)
    sys.exit(1)
print("ok")
