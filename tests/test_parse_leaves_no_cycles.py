"""A parse frees what it built as it returns: no reference cycle keeps a page's tree alive until the cycle
collector happens to run (a recursive closure did: every page with code or a table in a list item held
its whole lxml tree until then, and the collector's passes over it cost a parser process CPU)."""

from __future__ import annotations

import gc

import pytest

from ingest.parse import parse_bytes

PAGES = {
    "list.html": b"""<html><head><title>T</title></head><body><main><h1>Install</h1>
<ul><li>Run <pre>make\ninstall</pre> then <table><tr><td>a</td><td>b</td></tr></table> done
<ul><li>nested <b>bold</b></li></ul></li><li>plain</li></ul>
<dl><dt>term <a class="headerlink" href="#t">\xc2\xb6</a></dt><dd><p>Text <br>more</p></dd></dl></main></body></html>""",
    "doc.md": b"# Title\n\n- item with `code`\n  ```\n  block\n  ```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "notes.txt": b"Heading\n=======\n\nA paragraph of text.\n\n- one\n- two\n",
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_parse_leaves_nothing_for_the_cycle_collector(name: str) -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        parse_bytes(PAGES[name], name)  # the first call imports the parser: its module-level objects
        gc.collect()
        parsed = parse_bytes(PAGES[name], name)
        assert parsed.text
        assert gc.collect() == 0
    finally:
        if was_enabled:
            gc.enable()
