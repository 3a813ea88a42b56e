#!/usr/bin/env python3
# LEAK (control chars): raw C1 control characters (U+0080..U+009F, category Cc, e.g. U+0080, U+0090,
# U+009B CSI) in UTF-8 text, Markdown and HTML reach the parsed text and the stored chunk
# (run + search --json), although "other control characters never reach a chunk".
import json, os, subprocess, sys, tempfile, unicodedata
ING = "/work/attack13/.venv/bin/ingest"
d = tempfile.mkdtemp(); os.makedirs(d + "/c/documents")
fm = '---\ndoc_id: %s\nversion: "1"\ntitle: %s\naccess: public\n---\n'
open(d + "/c/documents/a.txt", "w").write(fm % ("a", "A") + "Intro.\n\nkoalaword\u0080one \u009b31mred\u0090end.\n")
open(d + "/c/documents/b.md", "w").write(fm % ("b", "B") + "# H\n\nkoalaword\u0085two\u009bx \u0090y.\n")
open(d + "/c/documents/c.html", "w").write('<html><head><title>C</title><meta name="doc_id" content="c"><meta name="version" content="1"><meta name="access" content="public"></head><body><main><p>koalaword\u0080three \u009f.</p></main></body></html>')
st = f"sqlite:///{d}/idx.sqlite"
subprocess.run([ING, "run", d + "/c", "--store", st, "--json"], capture_output=True, cwd=d)
s = json.loads(subprocess.run([ING, "search", "koalaword", "--store", st, "--json", "--top", "10"], capture_output=True, text=True, cwd=d).stdout)
bad = 0
for h in s["hits"]:
    cc = sorted({hex(ord(c)) for c in h["text"] if unicodedata.category(c) == "Cc" and c not in "\n\t"})
    print(h["doc_id"], repr(h["text"]), cc); bad += bool(cc)
sys.exit(1 if bad or not s["hits"] else 0)
