#!/usr/bin/env python3
# LEAK (control chars): in HTML, NEL / U+2028 / U+2029 inside <pre> are kept raw in the parsed text,
# (also as &#x2028; &#11; &#12; references inside <pre><code>: VT/FF kept raw), and numeric references &#1; &#8; &#27; &#127; in a <p> put C0 controls/DEL into the text (raw bytes are dropped).
import json, os, subprocess, sys, tempfile, unicodedata
ING = "/work/attack13/.venv/bin/ingest"
d = tempfile.mkdtemp()
cases = {
 "pre": "<html><head><title>t</title></head><body><main><pre>alpha\u0085beta\ngamma\u2028delta\u2029eps</pre></main></body></html>",
 "preref": "<html><head><title>t</title></head><body><main><pre><code>alpha&#x2028;beta&#11;zeta&#12;eta</code></pre></main></body></html>",
 "ref": "<html><head><title>t</title></head><body><main><p>alpha&#1;beta &#27;[31m red&#127; x&#8;y</p></main></body></html>",
}
bad = 0
for k, v in cases.items():
    p = f"{d}/{k}.html"; open(p, "w").write(v)
    t = json.loads(subprocess.run([ING, "parse", p, "--json"], capture_output=True, text=True).stdout)["text"]
    cc = sorted({hex(ord(c)) for c in t if (unicodedata.category(c) == "Cc" and c not in "\n\t") or c in "\u2028\u2029"})
    print(k, repr(t), cc); bad += bool(cc)
sys.exit(1 if bad else 0)
