"""HTML metadata: the ``<meta name content>`` fields and ``<title>``, read as front matter.

Every ``<meta>`` of the page is read, in the head or the body. A field-naming ``<meta>`` the page
holds where nothing is read (after ``</html>``), or one whose ``name`` or ``content`` is written twice
(HTML readers differ on which counts: libxml2 and browsers keep the first, BeautifulSoup the last),
makes the file unreadable, never a field silently dropped or picked.
"""

from __future__ import annotations

import html.parser
import itertools
import re
from collections.abc import Iterator
from typing import Any

from ingest.field_names import field_name, near_miss_problems
from ingest.model import UnreadableFile
from ingest.parse._common import collapse_spaces
from ingest.parse.html_source import Element


def _add_field(fields: dict[str, Any], key: str, content: str) -> None:
    """A repeated name gives a list of its values, in document order."""
    if key not in fields:
        fields[key] = content
    elif isinstance(fields[key], list):
        fields[key].append(content)
    else:
        fields[key] = [fields[key], content]


def _metadata(tree: Element, source: bytes) -> dict[str, Any]:
    """Every ``<meta name content>`` (names lower-cased; a repeated name gives a list; a ``<meta name>``
    without ``content`` gives "", as a browser's DOM reads it: a field given empty)."""
    _refuse_unread_metas(tree)
    _refuse_repeated_attributes(source, tree)
    fields: dict[str, Any] = {}
    for meta in tree.iter("meta"):
        name = meta.get("name")
        if name is None or not name.strip():
            continue
        _add_field(fields, name.strip().lower(), meta.get("content", ""))
    if "title" not in fields:
        # every <title> of the page outside SVG/MathML (whose <title> is an image's tooltip): two are the
        # title given twice, never the first picked silently
        for title in tree.iter("title"):
            if any(parent.tag in ("svg", "math") for parent in title.iterancestors()):
                continue
            value = collapse_spaces("".join(str(part) for part in title.itertext()))
            if value:
                _add_field(fields, "title", value)
    return fields


def _names_a_field(name: str | None) -> bool:
    """Whether a ``<meta name>`` is a known field or a near-spelling of one (which the metadata check
    reports): such a ``<meta>`` is never dropped unread."""
    from ingest.metadata import KNOWN_FIELDS  # (imported on this rare path only)

    if name is None or not name.strip():
        return False
    return field_name(name.strip()) in KNOWN_FIELDS or bool(near_miss_problems("", {name.strip(): None}, KNOWN_FIELDS))


def _refuse_unread_metas(tree: Element) -> None:
    """libxml2 puts what follows ``</html>`` in a second root element, outside the page that is read
    (a browser would take it into the body): a field named there would be lost."""
    for sibling in itertools.chain(tree.itersiblings(preceding=True), tree.itersiblings()):
        if sibling.tag.__class__ is not str:
            continue  # a comment
        for meta in sibling.iter("meta"):
            name = meta.get("name")
            if _names_a_field(name):
                shown = f"<meta name={name!r} content={meta.get('content')!r}>"
                raise UnreadableFile(
                    f"{field_name(str(name).strip())}: {shown} comes after </html>, where nothing is read "
                    "(move it into <head>; nothing was guessed)"
                )


# A <meta> start tag in the ASCII-lower-cased source, to its first ">" outside quotes: never shorter
# than the tag as an HTML tokenizer reads it (a quote it takes for an opening one only makes it longer)
_META_TAG = re.compile(rb"""<meta(?=[\s/>])(?:[^>"']|"[^"]*"|'[^']*')*>""")


class _StartTag(html.parser.HTMLParser):
    """The first start tag of some markup with every attribute as written, repeats kept (lxml keeps
    one of each name)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: tuple[list[tuple[str, str | None]], str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.found is None:
            self.found = (attrs, self.get_starttag_text() or "")

    handle_startendtag = handle_starttag


def _meta_tags(source: bytes) -> Iterator[tuple[int, bytes]]:
    """(offset, markup from there) of every ``<meta`` tag in the source that may repeat an attribute."""
    lowered = source.lower()
    at = lowered.find(b"<meta")
    while at != -1:  # bytes.find runs in C; nearly every page has no tag naming `name` or `content` twice
        match = _META_TAG.match(lowered, at)
        tag = lowered[at : match.end()] if match else lowered[at:]  # an unclosed quote: up to the end
        if tag.count(b"name") > 1 or tag.count(b"content") > 1:
            yield at, source[at : at + len(tag)]
        at = lowered.find(b"<meta", at + 5)


def _refuse_repeated_attributes(source: bytes, tree: Element) -> None:
    """A field-naming ``<meta>`` with two ``name`` or two ``content`` attributes is refused."""
    lines: set[int] | None = None
    for at, markup in _meta_tags(source):
        reader = _StartTag()
        reader.feed(markup.decode("utf-8", "replace"))
        reader.close()
        if reader.found is None:
            continue
        attrs, text = reader.found
        names = [value or "" for key, value in attrs if key == "name"]
        repeated = [key for key in ("name", "content") if sum(1 for k, _ in attrs if k == key) > 1]
        if not repeated or not any(_names_a_field(name) for name in names):
            continue
        if lines is None:  # lines where lxml's <meta> elements end: a tag in a comment or a script is no element
            lines = {int(getattr(meta, "sourceline", None) or 0) for meta in _all_metas(tree)}
        first = source.count(b"\n", 0, at) + 1
        if not lines.intersection(range(first, first + text.count("\n") + 1)):
            continue
        field = next(field_name(name.strip()) for name in names if _names_a_field(name))
        given = " and ".join(
            f"{key} {len(values)} times ({' and '.join(repr(v) for v in values)})"
            for key in repeated
            for values in [[value for k, value in attrs if k == key]]
        )
        raise UnreadableFile(
            f"{field}: a <meta> gives {given}: HTML readers differ on which one counts (write each once; "
            "nothing was picked)"
        )


def _all_metas(tree: Element) -> Iterator[Element]:
    for root in itertools.chain((tree,), tree.itersiblings(preceding=True), tree.itersiblings()):
        if root.tag.__class__ is str:
            yield from root.iter("meta")
