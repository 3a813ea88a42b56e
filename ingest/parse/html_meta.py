"""HTML metadata: the ``<meta name content>`` fields and ``<title>``, read as front matter.

Every ``<meta>`` of the page is read, in the head or the body. A field-naming ``<meta>`` after
``</html>`` (a browser reads it into the body, libxml2 and BeautifulSoup beside the page), one whose ``name``
or ``content`` is written twice (HTML readers differ on which counts: libxml2 and browsers keep the first,
BeautifulSoup the last), or one naming a field by ``property``, ``itemprop`` or ``http-equiv`` instead of
``name`` (which gives no field) makes the file unreadable, never a field silently dropped or picked.
"""

from __future__ import annotations

import functools
import html.parser
import itertools
import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ingest.field_names import field_name, named_field
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
        _refuse_field_named_otherwise(meta)
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


@functools.lru_cache(maxsize=4096)  # the same few names on every page of a site: the near-spelling check once
def _field_named(name: str | None) -> str | None:
    """The field a ``<meta name>`` is or is a near-spelling of (which the metadata check reports), as
    :func:`ingest.field_names.named_field` reads every source's names: such a ``<meta>`` is never dropped
    unread."""
    from ingest.metadata import KNOWN_FIELDS  # (imported when first needed, as elsewhere in the parsers)

    if name is None or not name.strip():
        return None
    return named_field(name.strip(), KNOWN_FIELDS)


def _names_a_field(name: str | None) -> bool:
    return _field_named(name) is not None


def _refuse_unread_metas(tree: Element) -> None:
    """libxml2 puts what follows ``</html>`` in a second root element, beside the page (a browser takes it
    into the body, and so does the parser for the text): HTML readers differ on whether a field named
    there is the page's."""
    for sibling in itertools.chain(tree.itersiblings(preceding=True), tree.itersiblings()):
        if sibling.tag.__class__ is not str:
            continue  # a comment
        for meta in sibling.iter("meta"):
            _refuse_field_named_otherwise(meta)
            name = meta.get("name")
            if _names_a_field(name):
                raise UnreadableFile(
                    f"{field_name(str(name).strip())}: {_shown(meta, 'name', str(name))} comes after </html>, "
                    "where HTML readers differ on whether it is the page's (move it into <head>; nothing was guessed)"
                )


# Attributes that name what a <meta> gives otherwise than ``name`` (RDFa, microdata, a pragma directive)
_NAMING_ATTRIBUTES = ("property", "itemprop", "http-equiv")


def _refuse_field_named_otherwise(meta: Element) -> None:
    """A ``<meta property|itemprop|http-equiv>`` naming a field (as ``<meta name>`` names one: case, ``-``,
    unseen characters and near-spellings alike; any one of its space-separated names) gives no field:
    refused, never dropped for inventory.yaml or access.default to fill with a label the author did not
    write. ``og:title``, ``article:published_time`` or ``http-equiv="content-type"`` name none."""
    for attribute in _NAMING_ATTRIBUTES:
        value = meta.get(attribute)
        if value is None:
            continue
        named = next(filter(None, map(_field_named, (value, *value.split()))), None)
        if named is not None:
            content = meta.get("content")
            raise UnreadableFile(
                f"{named}: {_shown(meta, attribute, value)} gives no field (only <meta name> does): write "
                f"<meta name={named!r} content={'…' if content is None else repr(content)}> (nothing was guessed)"
            )


def _shown(meta: Element, attribute: str, value: str) -> str:
    content = meta.get("content")
    return f"<meta {attribute}={value!r}" + ("" if content is None else f" content={content!r}") + ">"


# A <meta> start tag in the lower-cased source: a quote opens a value only after "=" (and spaces), as an
# HTML tokenizer reads it (a quote in a name or an unquoted value, "it's", is a letter), and a ">" inside
# a quoted value does not end the tag; never shorter than the tag as a tokenizer reads it
_META_TAG = re.compile(rb"""<meta(?=[\s/>])(?:=\s*"[^"]*"|=\s*'[^']*'|[^>])*+>""")


# ``name`` or ``content`` where an HTML tokenizer may read it as an attribute's name: after a space, a
# "/" or a quote closing a value, and before a space, "=", "/", ">" or the end (also in a value such as
# content="a name = x": a superset, never fewer than the attributes written). Not every "content" of
# the tag: http-equiv="Content-Type" content="…" would send nearly every page to the slow full read.
_NAME_ATTRIBUTE = re.compile(rb"""(?<=[\s/"'])name(?=[\s=/>]|$)""")
_CONTENT_ATTRIBUTE = re.compile(rb"""(?<=[\s/"'])content(?=[\s=/>]|$)""")


def _meta_tag_spans(lowered: bytes) -> Iterator[tuple[int, int]]:
    """Where each ``<meta`` start tag of the lower-cased source begins and ends (an unclosed quote: the end)."""
    at = lowered.find(b"<meta")
    while at != -1:  # bytes.find runs in C: nearly every page ends here
        match = _META_TAG.match(lowered, at)
        yield at, match.end() if match else len(lowered)
        at = lowered.find(b"<meta", at + 5)


def _may_repeat_attributes(source: bytes) -> bool:
    """Whether some ``<meta`` tag of the source writes ``name`` or ``content`` twice (a superset of the
    tags that repeat those attributes: a value may hold the word)."""
    lowered = source.lower()
    return any(
        len(_NAME_ATTRIBUTE.findall(lowered, start, end)) > 1
        or len(_CONTENT_ATTRIBUTE.findall(lowered, start, end)) > 1
        for start, end in _meta_tag_spans(lowered)
    )


Attributes = list[tuple[str, str | None]]


class _MetaTags(html.parser.HTMLParser):
    """Every ``<meta>`` start tag of a page with its attributes as written, repeats kept (lxml keeps one
    of each name); tags inside comments, scripts and styles are none."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[Attributes] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "meta":
            self.found.append(attrs)

    handle_startendtag = handle_starttag


def _each_meta_tag(source: bytes) -> list[Attributes]:
    """The attributes of every ``<meta>`` start tag of the source, comments and scripts included."""
    found: list[Attributes] = []
    for start, end in _meta_tag_spans(source.lower()):
        reader = _MetaTags()
        reader.feed(source[start:end].decode("utf-8", "replace"))
        reader.close()
        found.extend(reader.found)
    return found


def _refuse_repeated_attributes(source: bytes, tree: Element | None = None) -> None:
    """A field-naming ``<meta>`` with two ``name`` or two ``content`` attributes is refused: one the
    page's tokenizer reads (html.parser, which knows comments and scripts), and one ``tree`` holds (lxml)
    that html.parser did not see (it does not follow HTML's rules for ``<!-->``, ``--!>``, ``<![CDATA[``
    or ``</script x>``, where a browser and lxml read the tag)."""
    if not _may_repeat_attributes(source):
        return
    reader = _MetaTags()  # the whole page, on the rare page that may hold one: comments and scripts known
    try:
        reader.feed(source.decode("utf-8", "replace"))
        reader.close()
    except AssertionError:  # html.parser gives up on a marked section ("<![foo>"): each tag read alone
        _refuse_repeats(_each_meta_tag(source))
        return
    _refuse_repeats(reader.found)
    if tree is None:
        return
    # lxml keeps the first of each attribute: a tag read alone that repeats one, whose first values an
    # element of the tree has more often than html.parser saw them, is a tag lxml read and html.parser not
    seen = Counter(_first_values(attrs) for attrs in reader.found)
    held = Counter(tuple(sorted((str(k), str(v)) for k, v in meta.attrib.items())) for meta in tree.iter("meta"))
    _refuse_repeats(
        [attrs for attrs in _each_meta_tag(source) if held[_first_values(attrs)] > seen[_first_values(attrs)]]
    )


def _first_values(attrs: Attributes) -> tuple[tuple[str, str], ...]:
    first: dict[str, str] = {}
    for key, value in attrs:
        first.setdefault(key, value or "")
    return tuple(sorted(first.items()))


def _refuse_repeats(found: list[Attributes]) -> None:
    for attrs in found:
        names = [value or "" for key, value in attrs if key == "name"]
        given = {key: [value for k, value in attrs if k == key] for key in ("name", "content")}
        repeated = {key: values for key, values in given.items() if len(values) > 1}
        fields = [field_name(name.strip()) for name in names if _names_a_field(name)]
        if repeated and fields:
            shown = " and ".join(
                f"{key} {len(values)} times ({' and '.join(repr(value) for value in values)})"
                for key, values in repeated.items()
            )
            raise UnreadableFile(
                f"{fields[0]}: a <meta> gives {shown}: HTML readers differ on which one counts (write each "
                "once; nothing was picked)"
            )
