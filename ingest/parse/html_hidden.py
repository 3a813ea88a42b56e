"""HTML elements whose text is not read: hidden ones (``hidden``, ``display:none``, a closed ``<dialog>``,
chrome landmarks, decorations and drawn copies under ``aria-hidden``), a site's search forms, the
undrawn parts of SVG drawings and the copies of a MathML formula not read. Found once per page."""

from __future__ import annotations

import itertools
import re

from ingest.parse.html_rules import BREAKING, CHROME_ROLES, HEADINGS, SVG_UNDRAWN, _classes, _name
from ingest.parse.html_source import _TAG_NAME, Element, _text_of

# Hiding attributes as written in a tag, at the attribute's name (the UTF-8 source, ASCII lower-cased).
# Where the attribute's syntax allows white space, any byte of a non-ASCII character is taken for
# it too (U+00A0 and the other Unicode spaces): the tags found are a superset of the tags whose
# elements can be hidden, and each element is then judged by its parsed attributes.
_WS = r"\s\x80-\xff"
_HIDING_ATTRIBUTES = {
    name.encode("ascii"): re.compile(pattern.format(ws=_WS).encode("ascii"))
    for name, pattern in {
        "hidden": r"hidden(?=[{ws}=/>])",
        "aria-hidden": r"""aria-hidden[{ws}]*=[{ws}]*["']?[{ws}]*true""",
        "role": r"""role[{ws}]*=[{ws}]*["']?[{ws}]*(?:navigation|banner|contentinfo|complementary|search)""",
        "style": r"""style[{ws}]*=[{ws}]*["'][^"'>]*(?:display[{ws}]*:[{ws}]*none|visibility[{ws}]*:[{ws}]*hidden)""",
    }.items()
}


def _hidden(node: Element) -> bool:
    """Not shown to a reader (``hidden``, ``display:none``), a landmark of page chrome, or a decoration
    hidden from screen readers (see :func:`_aria_hidden_decoration`). (Closed dialogs: _hidden_elements.)"""
    attrib = node.attrib
    if not attrib:
        return False
    if attrib.get("role", "").strip().lower() == "tabpanel":
        return False  # an inactive tab (Docusaurus renders it ``hidden``, jQuery UI ``display:none``): a click away
    hidden = attrib.get("hidden")
    if hidden is not None and hidden.strip().lower() != "until-found":
        return True  # (until-found: a collapsed section that the browser's find-in-page opens, the page's text)
    if attrib.get("aria-hidden", "").strip().lower() == "true" and _aria_hidden_decoration(node):
        return True
    if attrib.get("role", "").strip().lower() in CHROME_ROLES:
        return True
    style = attrib.get("style")
    if not style:
        return False
    style = style.replace(" ", "").lower()
    return "display:none" in style or "visibility:hidden" in style


DIALOG_ROLES = {"dialog", "alertdialog"}


# Class names of text shown to screen readers alone (Bootstrap, Tailwind, WordPress, Drupal, GOV.UK …)
_VISUALLY_HIDDEN = re.compile(r"(?:^|[-_])(?:sr-only|visually-?hidden|screen-?reader-(?:text|only)|element-invisible)$")


def _aria_hidden_decoration(node: Element) -> bool:
    """``aria-hidden`` hides from screen readers what sighted readers see: collapsed panels and tabs
    hold real text and are kept. Dropped: a modal or dialog (hidden until opened), a drawing, the drawn
    copy of what screen readers are given beside it (see :func:`_beside_accessible_copy`), and an icon or
    mark (one word or symbol: "menu", "¶", "→")."""
    name = _name(node)
    if name == "svg" or name == "math":
        return True
    if node.get("role", "").strip().lower() in DIALOG_ROLES or "modal" in _classes(node):
        return True
    if name not in BREAKING and _beside_accessible_copy(node):
        return True
    words = _text_of(node).split()
    return not words or len(words) == 1 and _ICON_TEXT.fullmatch(words[0]) is not None


# One word an icon font draws ("menu", "open_in_new") or a mark ("¶", "→"): "Yes." and "IP68" are text.
_ICON_TEXT = re.compile(r"[a-z_]+|[^\w]+")


def _beside_accessible_copy(node: Element) -> bool:
    """Whether a sibling of the (inline) element is a formula's MathML (bare or in a wrapper of its own) or
    text shown to screen readers alone: the element is then the copy drawn for the eye (KaTeX's and
    MathJax's formulas, a row of stars beside "4 of 5 stars"). A block beside such text (an accordion's
    panel after "collapsed:") is not: the caller asks this of inline elements only."""
    for sibling in itertools.chain(node.itersiblings(preceding=True), node.itersiblings()):
        name = _name(sibling)
        if name == "math" or (name and len(sibling) == 1 and _name(sibling[0]) == "math"):
            return True
        if name and any(_VISUALLY_HIDDEN.search(value) for value in _classes(sibling)):
            return True
    return False


# <input> types that take no typed text: a form of only these and search boxes is still a search form
_NOT_TEXT_INPUTS = {
    *("hidden", "submit", "button", "image", "reset", "checkbox", "radio", "file", "color", "range"),
    *("date", "datetime-local", "month", "week", "time"),
}
_SEARCH_NAMES = {"q", "s", "query", "keyword", "keywords"}  # Google's, WordPress's and the common names
_SEARCH_WORD = re.compile(r"(?<![A-Za-z])[Ss]earch|(?<=[a-z])Search|SEARCH")  # not "research"
MAX_SEARCH_FORM_WORDS = 40  # a search form's labels and tips; more is the page's text around its box


def _search_form(form: Element) -> bool:
    """A site's search box: a form whose every text box is a search box (see :func:`_search_box`) and
    that holds no more than a search form's labels, no heading, fieldset nor main content. A form around
    the page's text (ASP.NET Web Forms wrap every page in one, search box included) is not one."""
    boxes = [
        box for box in form.iter("input", "textarea") if (box.get("type") or "").strip().lower() not in _NOT_TEXT_INPUTS
    ]
    if not boxes or not all(_search_box(box) for box in boxes):
        return False
    if next(form.iter(*HEADINGS, "main", "article", "fieldset"), None) is not None:
        return False
    return len(_text_of(form).split(None, MAX_SEARCH_FORM_WORDS)) <= MAX_SEARCH_FORM_WORDS


def _search_box(box: Element) -> bool:
    """``type=search``, ``role=searchbox``, a search box's usual name, or "search" as a word in its name,
    id, placeholder, ARIA label or title ("Search the handbook", ``site-search``, ``txtSearch``; not
    ``research``)."""
    if (box.get("type") or "").strip().lower() == "search" or (box.get("role") or "").strip().lower() == "searchbox":
        return True
    if (box.get("name") or "").strip().lower() in _SEARCH_NAMES:
        return True
    return any(_SEARCH_WORD.search(box.get(key) or "") for key in ("name", "id", "placeholder", "aria-label", "title"))


_TEX = re.compile(r"(?:^|[/-])(?:la)?tex$", re.IGNORECASE)  # application/x-tex, TeX, text/x-latex


def _formula_copies(semantics: Element) -> list[Element]:
    """The parts of a MathML ``<semantics>`` not read: it holds one formula several times (the drawn
    presentation, then annotations). Kept is its TeX source when it has one (what the author wrote, and
    readable as text: ``\\pi r^2``, where the presentation reads "πr2"), else its presentation."""
    parts = [part for part in semantics if _name(part)]
    keep = next(
        (part for part in parts if part.tag == "annotation" and _TEX.search(part.get("encoding") or "") and part.text),
        None,
    )
    if keep is None and parts and parts[0].tag not in ("annotation", "annotation-xml"):
        keep = parts[0]
    return [part for part in parts if part is not keep]


_CONSENT_WORDS = (b"cookie", b"consent", b"gdpr", b"ccpa")  # in the lower-cased source: a page that may hold a notice
_CONSENT_NAME = re.compile(r"cookie|consent|gdpr|ccpa", re.IGNORECASE)
_COOKIE_NAME = re.compile(r"cookie|gdpr|ccpa", re.IGNORECASE)
# what names a notice, not a section about cookies ("cookie-policy") or a consent form ("consent-form")
_NOTICE_NAME = re.compile(r"banner|notice|bar(?![a-z])|pop-?up|modal|overlay|dialog|consent|prompt|wall|message", re.I)
_COOKIE_WORD = re.compile(r"\bcookies?\b", re.IGNORECASE)
MAX_NOTICE_WORDS = 120  # a consent notice's few sentences and buttons; more is a page's text


def _consent_notices(lowered: bytes, body: Element) -> set[Element]:
    """The cookie and consent notices of the page, open or not (see :func:`_consent_notice`); ``lowered``:
    the page's source lower-cased (bytes.find, in C: a case-blind regex took as long as the tree)."""
    if not any(word in lowered for word in _CONSENT_WORDS):
        return set()
    return {node for node in body.iter("div", "section", "aside", "dialog") if _consent_notice(node)}


def _consent_notice(node: Element) -> bool:
    """A cookie or consent notice: named one by its id, class or ARIA label ("cookie" with "banner",
    "notice", "consent", "dialog"…: ``#cookie-notice``, ``.cc-banner``'s "Cookie banner", Cookiebot's
    ``#CybotCookiebotDialog``), or a dialog named for consent or saying "cookies" in a few words. Page
    chrome wherever it is; a dialog about anything else, or a section about cookies, is the page's text."""
    attrib = node.attrib
    names = " ".join(attrib.get(key) or "" for key in ("id", "class", "aria-label"))
    if _COOKIE_NAME.search(names) and _NOTICE_NAME.search(names):
        return True
    dialog = (
        node.tag == "dialog"
        or (attrib.get("role") or "").strip().lower() in DIALOG_ROLES
        or (attrib.get("aria-modal") or "").strip().lower() == "true"
    )
    if not dialog:
        return False
    if _CONSENT_NAME.search(names):
        return True
    text = _text_of(node)
    return _COOKIE_WORD.search(text) is not None and len(text.split(None, MAX_NOTICE_WORDS)) <= MAX_NOTICE_WORDS


def _hidden_elements(source: bytes, body: Element) -> set[Element]:
    """Every hidden element of the page (see :func:`_hidden`), the undrawn parts of its SVG drawings,
    its closed dialogs, its search forms and the copies of its formulas not read, in one pass."""
    lowered = source.lower()  # ASCII letters only: the names and values looked for are ASCII
    hidden = _hiding_elements(lowered, body)
    for node in body.iter("svg", "dialog", "form", "semantics"):
        name = node.tag
        if name == "svg":
            hidden.update(node.iter(*SVG_UNDRAWN))
        elif name == "dialog":
            if "open" not in node.attrib:
                hidden.add(node)
        elif name == "form":
            if _search_form(node):
                hidden.add(node)
        else:
            hidden.update(_formula_copies(node))
    return hidden | _consent_notices(lowered, body)


def _hiding_elements(lowered: bytes, body: Element) -> set[Element]:
    """Every hidden element of the page (see :func:`_hidden`), found once.

    Looking at the attributes of every element costs more than building the tree, so
    only elements of the tag names that carry a hiding attribute somewhere in the source
    are looked at (all elements when a tag name cannot be read).
    """
    tags: set[str] = set()
    for word, pattern in _HIDING_ATTRIBUTES.items():
        at = lowered.find(word)
        while at != -1:  # bytes.find runs in C; a regex over the whole source would not
            if at > 0 and (lowered[at - 1] >= 0x80 or lowered[at - 1 : at].isspace()) and pattern.match(lowered, at):
                opening = lowered.rfind(b"<", 0, at)
                if opening > lowered.rfind(b">", 0, at):  # inside a tag, not running text
                    name = _TAG_NAME.match(lowered, opening)
                    if name is None:
                        return {node for node in body.iter() if _name(node) and _hidden(node)}
                    tags.add(name.group(1).decode("ascii"))
            at = lowered.find(word, at + len(word))
    return {node for node in body.iter(*tags) if _hidden(node)} if tags else set()
