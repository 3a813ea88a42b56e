"""Placeholder PDF titles: a /Title (or XMP dc:title) that a producer writes when the author gave none.

reportlab writes ``untitled``, Word's PDF printer ``Microsoft Word - report.docx``, dvips and pdfTeX
the file's name (``dvips.dvi``, ``samplepdf.pdf``), editors ``Untitled document`` or ``Document1``.
None of these is the document's title: taken as one, it either becomes every chunk's title (a
citation naming "untitled") or disagrees with the inventory's title and rejects the file. Such a
title counts as missing, like an empty ``/Title ()``: the metadata rules for a missing title apply
(inventory.yaml fills it, or "missing required field").
"""

from __future__ import annotations

import re
from typing import Any

# "untitled", "Untitled document", "Untitled-1", "(untitled)", "No title", "Document1", "New document"
_PLACEHOLDER = re.compile(
    r"[(\[<]?\s*(?:(?:untitled|no[ _-]?title|sans titre|ohne titel|sin t[ií]tulo|senza titolo)"
    r"(?:[\s_-]*(?:document|presentation|\d+))*|(?:new )?document[\s_-]*\d*|doc\d+|title)\s*[)\]>]?",
    re.IGNORECASE,
)

# What office programs' PDF printers prefix to the file's name: "Microsoft Word - report.docx"
_PRINTED_FROM = re.compile(
    r"microsoft\s+(?:office\s+)?(?:word|excel|powerpoint|publisher|visio)\s+-\s+.*", re.IGNORECASE
)

_DOCUMENT_EXTENSIONS = (
    r"pdf|dvi|ps|eps|tex|ltx|dtx|texi|texinfo|md|markdown|txt|rst|html?|xml|docx?|docm|dotx?|odt|ott|rtf|wpd"
    r"|pages|pptx?|odp|key|xlsx?|ods|numbers|indd|qxd|pub|vsdx?"
)

# A file's name, maybe with its folder: "report.pdf", "doc1.tex", "C:\Users\me\report.docx", "/tmp/x.dvi".
# A name with spaces only for office files, which people name so ("Annual report.docx"); "Using
# config.md" could be a title.
_FILE_NAME = re.compile(
    rf"(?:[a-z]:)?(?:[^\s/\\]*[/\\])*[^\s/\\]+\.(?:{_DOCUMENT_EXTENSIONS})"
    r"|(?:[a-z]:)?(?:[^/\\]*[/\\])*[^/\\]+\.(?:docx?|docm|odt|rtf|pages|pptx?|odp|key|xlsx?|ods|numbers)",
    re.IGNORECASE,
)


def placeholder_title(value: Any) -> bool:
    """Whether ``value`` (a title as read) is a placeholder, not a title: blank, a producer's default
    or the file's name (see the module's doc). Only text can be one: another value is left to the checks."""
    if not isinstance(value, str):
        return False
    text = " ".join(value.split())
    if not text:
        return True
    return bool(_PLACEHOLDER.fullmatch(text) or _PRINTED_FROM.fullmatch(text) or _FILE_NAME.fullmatch(text))


def without_placeholders(title: Any) -> Any:
    """``title`` with its placeholder values left out: None when every value is one (a title given
    twice, as a list, keeps the others; one left is the title)."""
    if isinstance(title, list):
        kept = [value for value in title if not placeholder_title(value)]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else kept
    return None if placeholder_title(title) else title
