#!/usr/bin/env python3
"""Finding (LEAK): `access.default` widens a staff document for the length of a run.

Setup: ingest.toml `[access] default = "partner"`; salaries@1 gets `staff` from inventory.yaml and is indexed.
Then the inventory entry is deleted and the file bumped to version 2 (no access in the file).
Expected (README, `ingest run` table and "Corpus layout and metadata"): such a file is **rejected**
("access: not given; the default 'partner' would replace 'staff' of the stored salaries@1") and
"The default never widens or changes the label of a document the store holds"; a rejected document
writes nothing (SPEC).
Happened: the final report is right, but salaries@2 is written to the partner index as the worker delivers
it and only deleted after the check; a `partner` reader polling during the run gets salaries@2 (staff text).
A SIGKILL in that window leaves it readable until the next run. Exit 1 while the bug exists.
Usage: 06-...py [STORE_URL]  (default temp SQLite; also fails on http://127.0.0.1:9200)
"""
import subprocess, sys, tempfile, time, pathlib
sys.path.insert(0, "/work/main"); import ingest
VENV = "/work/attack12/.venv/bin"
tmp = pathlib.Path(tempfile.mkdtemp(prefix="atk06-")); c = tmp / "c"; docs = c / "documents"; docs.mkdir(parents=True)
store = sys.argv[1] if len(sys.argv) > 1 else f"sqlite:///{tmp}/idx.sqlite"
prefix = "atk-f06" if store.startswith("http") else None
pargs = ["--index-prefix", prefix] if prefix else []
(c / "ingest.toml").write_text('[access]\nlabels = ["public", "partner", "staff"]\ndefault = "partner"\n')
(c / "inventory.yaml").write_text("aaa-salaries.md: {access: staff}\n")
sal = docs / "aaa-salaries.md"
sal.write_text("---\ndoc_id: salaries\nversion: 1\ntitle: Salaries\n---\n\n# S\n\nsalary bands zebra confidential v1\n")
subprocess.run([f"{VENV}/ingest", "run", str(c), "--store", store, "-q"] + pargs, check=True, capture_output=True)
(c / "inventory.yaml").unlink()
sal.write_text("---\ndoc_id: salaries\nversion: 2\ntitle: Salaries\n---\n\n# S\n\nsalary bands zebra confidential v2\n")
for i in range(1500):
    (docs / f"zz{i:04d}.md").write_text(f"---\ndoc_id: filler-{i}\nversion: 1\ntitle: F{i}\naccess: public\n---\n\n# F\n\n" + "lorem ipsum dolor " * 300 + "\n")
run = subprocess.Popen([f"{VENV}/ingest", "run", str(c), "--store", store, "-q"] + pargs, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
seen = set()
with ingest.open_store(store, prefix, create=False) as ix:
    while run.poll() is None:
        try:
            seen |= {(h.chunk.doc_id, h.chunk.version, h.chunk.access) for h in ix.search("salary bands zebra", role="partner", top=10)}
        except Exception:
            pass
        time.sleep(0.02)
out = run.stdout.read()
print([l for l in out.splitlines() if "salaries" in l][:2])
if prefix:
    subprocess.run(["bash", "-c", f"for i in $(curl -s 'http://127.0.0.1:9200/_cat/indices/{prefix}-*?h=index'); do curl -s -XDELETE http://127.0.0.1:9200/$i >/dev/null; done"])
if any(d == "salaries" for d, _, _ in seen):
    print("BUG: role partner read the staff document salaries during the run:", seen); sys.exit(1)
print("ok"); sys.exit(0)
