"""Reading and validating document metadata (SPEC "Metadata"): owns the field rules and inventory.yaml.

Pure functions over values: the raw fields a parser found in a file, the entry of
``inventory.yaml`` for that file and the corpus settings go in; validated
:class:`DocumentMeta` and *every* problem found come out. Every problem message names
the file, the field and the offending value, e.g.
``documents/a.md: access: unknown access label 'secret' (labels: public, partner, staff)``.

Values may come from YAML (typed: str, int, float, date, list ...) or from HTML/PDF
(always strings), so each field is first normalised to one comparable form.
YAML can also hand us an alias bomb (a few lines that expand to billions of nodes);
nothing here walks a value beyond a bounded depth and length, so a bomb is only ever
reported, never expanded.
"""

from __future__ import annotations

import re
import reprlib
import unicodedata
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from ingest.field_names import fold_field_names, near_miss_problems
from ingest.model import DocumentMeta
from ingest.settings import Settings

KNOWN_FIELDS = (
    "doc_id",
    "version",
    "title",
    "access",
    "effective_from",
    "effective_to",
    "status",
    "superseded_by",
    "tags",
)
STATUSES = ("current", "superseded")
SLUG = re.compile(r"[a-z0-9][a-z0-9._-]*")
SLUG_TEXT = "[a-z0-9][a-z0-9._-]*"
SUPERSEDED_BY = re.compile(r"(?P<doc_id>[a-z0-9][a-z0-9._-]*)@(?P<version>[^\s|@]+)")
ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")  # ASCII digits only: \d takes "２０２５"
INVENTORY = "inventory.yaml"
MAX_INVENTORY_NODES = 100_000  # expanded YAML nodes; more is an alias bomb, not an inventory
MAX_FIELD_VALUES = 10_000  # expanded values of one field; more is an alias bomb, not metadata

_repr = reprlib.Repr()
_repr.maxlevel = 2
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 5
_repr.maxstring = _repr.maxother = 80


def show(value: Any) -> str:
    """A short, bounded rendering of a value for a problem message (safe on alias bombs)."""
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date):
        return value.isoformat()
    return _repr.repr(value)


class _Invalid:
    """Why a raw value could not be normalised; compares by its rendering."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Invalid) and other.reason == self.reason

    def __hash__(self) -> int:
        return hash(self.reason)


def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str) and not value.strip():
        return True
    return isinstance(value, (list, tuple)) and not value


def _as_text(value: Any) -> str | None:
    """A scalar as stripped text; numbers become their decimal form; anything else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)):
        # Front matter and inventory keep `version` as written (ingest.safe_yaml); a number
        # here comes from another field or a PDF number object, and reads as its decimal form.
        return str(value)
    return None


def _as_date(value: Any) -> date | _Invalid:
    if isinstance(value, datetime):  # must come first: a datetime is also a date
        return _Invalid(f"bad date {show(value)}: a date and time, expected YYYY-MM-DD")
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        # Taken as written: " 2025-01-01", "2025-01-01\t" or "2025-01-01\n" is refused, never the stripped date.
        if ISO_DATE.fullmatch(value):
            try:
                return date.fromisoformat(value)
            except ValueError:
                pass
        elif ISO_DATE.fullmatch(value.strip()):
            return _Invalid(f"bad date {show(value)}: expected YYYY-MM-DD with no space or control character around it")
        return _Invalid(f"bad date {show(value)}: expected YYYY-MM-DD")
    return _Invalid(f"bad date {show(value)}: expected YYYY-MM-DD")


def _as_tags(value: Any, text_fields: bool) -> tuple[str, ...] | _Invalid:
    """``text_fields``: the value is text a format gives (HTML ``<meta>``, PDF information), where tags
    are "a, b, c". In YAML (front matter, inventory.yaml) tags are a list: ``tags: a, b`` is one string,
    which reading as two tags (or as one) would be a guess, and an empty item is a tag left out."""
    if isinstance(value, str) and text_fields:
        items: list[Any] = [item for item in value.split(",") if item.strip()]  # "a, , b": a separator slip
    elif isinstance(value, list) and text_fields and len(value) > 1:
        return _Invalid(f"given {len(value)} times: {show(value)}")  # two <meta name="tags">: never one picked
    elif isinstance(value, str):
        return _Invalid(f"not a list of strings: {show(value)} is one string (write a YAML list: [a, b])")
    elif isinstance(value, (list, tuple)):
        items = list(value[:1001])
        if len(items) > 1000:
            return _Invalid(f"too many tags ({len(value)}; at most 1000)")
    else:
        return _Invalid(f"not a list of strings: {show(value)}")
    tags = []
    for number, item in enumerate(items, 1):
        text = item.strip() if isinstance(item, str) else None  # YAML keeps a tag as written: 007 is "007"
        if text is None:  # the item itself shown: the list's rendering stops after its first few
            return _Invalid(f"not a list of strings: item {number} is {show(item)} (in {show(value)})")
        if not text:
            return _Invalid(f"item {number} is an empty tag, {show(item)} (in {show(value)})")
        if UNPRINTABLE.search(text):  # as in every other field: a newline or bidi override spoofs output
            return _Invalid(f"contains control or bidi-override characters: {show(text)}")
        tags.append(text)
    return tuple(tags)


UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Chunk IDs hash "doc_id|version|start|end" and superseded_by is "doc_id@version": a version
# must not contain those separators. Lengths keep `doc_id@version` under Elasticsearch's
# 512-byte document ID limit.
VERSION = re.compile(r"[^\s|@]+")
MAX_LENGTH = {"doc_id": 200, "version": 100, "superseded_by": 301, "access": 100, "status": 20, "title": 1000}


IDENTIFIERS = ("doc_id", "version")  # matched exactly by `ingest chunks --version`, chunk IDs, superseded_by
KEYWORDS = (*IDENTIFIERS, "access", "status", "superseded_by")  # never stripped: any space around one is wrong


def _invisible(text: str) -> str | None:
    """The first space, control, format (zero-width, BOM) or unassigned character of ``text``,
    named: such a character makes "1\u200b" print like "1" but never match it."""
    for char in text:
        if unicodedata.category(char)[0] in "ZC":
            return f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed character')}"
    return None


def normalise(field: str, value: Any, settings: Settings, text_fields: bool = False) -> Any:
    """The normalised value of one present field, or an :class:`_Invalid` saying why not.

    Only checks what a single value can show; missing values are handled by the caller.
    ``text_fields``: the value is text from HTML or PDF, not YAML (see :func:`_as_tags`).
    """
    if field == "tags":
        return _as_tags(value, text_fields)
    if isinstance(value, (list, tuple)) and len(value) > 1 and all(isinstance(v, (str, int, float)) for v in value):
        # e.g. two <meta name="doc_id"> in one HTML file: never pick one.
        return _Invalid(f"given {len(value)} times: {show(value)}")
    if field in ("effective_from", "effective_to"):
        return _as_date(value)
    # Keywords are kept exactly as given: stripping "abc\n" or "staff\u00a0" would index a guessed value
    # (a label with a space or no-break space around it is an unknown label, as "Staff" is).
    text = value if field in KEYWORDS and isinstance(value, str) else _as_text(value)
    if text is not None and UNPRINTABLE.search(text):
        # Newlines, NUL, bell or bidi overrides would break one-line output and can spoof it.
        return _Invalid(f"contains control or bidi-override characters: {show(value)}")
    invisible = _invisible(text) if field == "version" and text is not None else None  # doc_id: the slug rule
    if invisible is not None:
        return _Invalid(
            f"contains a space or an invisible character ({invisible}): {show(value)} (write it without; "
            f'e.g. "5", "2026.1")'
        )
    if text is not None and len(text) > MAX_LENGTH.get(field, 10_000):
        return _Invalid(f"longer than {MAX_LENGTH.get(field, 10_000)} characters ({len(text)})")
    if field == "version" and text is not None and not VERSION.fullmatch(text):
        return _Invalid(f"not a usable version: {show(value)} (no spaces, '|' or '@'; e.g. \"5\", \"2026.1\")")
    if field == "doc_id":
        if text is None or not SLUG.fullmatch(text):
            return _Invalid(f"not a slug: {show(value)} (must match {SLUG_TEXT})")
        return text
    if text is None:
        return _Invalid(f"not a string: {show(value)}")
    if field == "access" and text not in settings.labels:
        return _Invalid(f"unknown access label {text!r} (labels: {', '.join(settings.labels)})")
    if field == "status" and text not in STATUSES:
        return _Invalid(f"unknown status {text!r} (statuses: {', '.join(STATUSES)})")
    if field == "superseded_by" and not SUPERSEDED_BY.fullmatch(text):
        return _Invalid(f"not doc_id@version: {text!r}")
    return text


def _pattern_texts(value: Any) -> tuple[str, ...]:
    if isinstance(value, tuple):
        return value
    if isinstance(value, date):
        return (value.isoformat(),)
    return (value,)


_ABSENT = object()  # a field without a (valid) value
_DEFAULTED = object()  # access filled from settings.access_default


def _field(
    source: str,
    name: str,
    file_fields: Mapping[str, Any],
    inventory: Mapping[str, Any],
    settings: Settings,
    problems: list[str],
    text_fields: bool,
) -> Any:
    """One field's normalised value (file over inventory), its problems appended to ``problems``."""
    in_file = not _is_missing(file_fields.get(name))
    in_inventory = not _is_missing(inventory.get(name))
    if (
        not in_file
        and name in file_fields
        and _empty_blocks_a_fill(source, name, file_fields[name], inventory, settings, problems)
    ):
        return _ABSENT
    if in_file and in_inventory:
        ours = normalise(name, file_fields[name], settings, text_fields)
        theirs = normalise(name, inventory[name], settings)
        if ours != theirs:
            problems.append(
                f"{source}: {name}: file has {show(file_fields[name])} but {INVENTORY} has {show(inventory[name])}"
            )
    if not in_file and not in_inventory:
        if name == "access" and settings.access_default:
            return _DEFAULTED
        if name in settings.required:
            problems.append(f"{source}: {name}: missing required field")
        return _ABSENT
    # inventory.yaml is YAML whatever the file's format: its tags are a list
    value = (
        normalise(name, file_fields[name], settings, text_fields)
        if in_file
        else normalise(name, inventory[name], settings)
    )
    if isinstance(value, _Invalid):
        problems.append(f"{source}: {name}: {value.reason}")
        return _ABSENT
    if name in ("title", "version") and not value:
        problems.append(f"{source}: {name}: missing required field")
        return _ABSENT
    pattern = settings.patterns.get(name)
    if pattern is not None:
        for text in _pattern_texts(value):
            if not re.fullmatch(pattern, text):
                problems.append(f"{source}: {name}: {text!r} does not match the pattern {pattern!r}")
    return value


def _empty_blocks_a_fill(
    source: str, name: str, value: Any, inventory: Mapping[str, Any], settings: Settings, problems: list[str]
) -> bool:
    """Whether a field the file gives empty (``access:``, ``content=""``, ``/access ()``) is a problem:
    it is given, so nothing fills it — neither inventory.yaml nor access.default (the file said
    something, and indexing another value would read it wrong). With nothing to fill it, an empty
    optional field stays unset and an empty required one is missing, as before."""
    written = "null" if value is None else show(value)
    if not _is_missing(inventory.get(name)):
        problems.append(
            f"{source}: {name}: is empty ({written}) in the file but {INVENTORY} has {show(inventory[name])} "
            "(nothing was filled in: write the value in the file, or leave the field out)"
        )
    elif name == "access" and settings.access_default:
        problems.append(
            f"{source}: access: is empty ({written}): access.default fills only a file that gives no access"
        )
    else:
        return False
    return True


# Bump when what counts as valid metadata changes (or how a format's fields are read): a run's scan
# memo then re-checks every file instead of reusing the last run's verdicts.
RULES_VERSION = "16"  # 3: field names read case-insensitively; 4: "-" is "_" in names, near-spellings, string
# fields kept as written, merge keys refused, misplaced front matter refused, same-file inventory keys;
# 5: names NFKC + case-folded, fields after a '...' end marker or hidden behind a blank-looking first
# line refused, /Keywords "access: staff" refused; 6: a field given empty is never filled, HTML <meta>
# after </html> or with a repeated name/content refused, XMP keywords read, /Subject naming a field refused;
# 7: access, status and superseded_by never stripped ("staff\u00a0" is an unknown label), inventory keys
# with ".." resolved; 8: /Keywords items with unseen characters or no sign, charsets browsers do not read;
# 9: HTML <meta property|itemprop|http-equiv> naming a field refused, charsets decoded as browsers decode them;
# 10: PDF /Subject read by pdfium too and in each of two values, an XMP packet pypdf cannot parse that names
# a field refused, /Keywords "access LABEL" refused for configured labels too; 11: dates never stripped
# (" 2025-01-01", "2025-01-01\t" refused), a block scalar ending the front matter keeps its line break;
# 12: a superseded document in force on a day its replacement (another doc_id) is refused; 13: unknown
# fields named like access, status, effective or superseded (access_level, doc_status) refused; 14: a
# symlink to a file listed under another name is a problem and not read, the file valid (no duplicate);
# 15: valid_from, replaced_by refused, in /Keywords items too (access_level: staff); YAML tags a list of
# non-empty strings; a PDF's numeric /version as written (2.10)
# 16: a placeholder PDF title ("untitled", "Microsoft Word - x.docx", a file name such as "dvips.dvi") is
# no title


def _case_variants(source: str, folded: Mapping[str, list[tuple[str, Any]]]) -> list[str]:
    """A problem for each field given under two spellings of its name."""
    return [
        f"{source}: {name}: given {len(given)} times: "
        + " and ".join(f"{written!r} is {show(value)}" for written, value in given)
        for name, given in folded.items()
        if len(given) > 1
    ]


def _first_values(fields: Any) -> Any:
    """``fields`` with lower-cased names (the first value where a name is given twice: reported elsewhere)."""
    if not isinstance(fields, Mapping):
        return fields
    return {name: given[0][1] for name, given in fold_field_names(fields).items()}


def resolve_metadata(
    source: str,
    file_fields: Mapping[str, Any],
    inventory_fields: Mapping[str, Any] | None,
    settings: Settings,
    *,
    text_fields: bool = False,
) -> tuple[DocumentMeta | None, list[str], bool]:
    """Merge a file's own fields with its inventory entry and validate the result.

    Returns the metadata (None when there is any problem), every problem found, and
    whether ``access`` was filled from ``settings.access_default``. The file's own value
    wins for validation when file and inventory disagree, but the disagreement itself
    is always a problem. ``text_fields``: the file's fields are the text of HTML ``<meta>`` or PDF
    information entries (``tags`` as "a, b"), not YAML front matter.
    """
    problems: list[str] = []
    if not isinstance(file_fields, Mapping):
        problems.append(f"{source}: metadata: not a mapping of fields: {show(file_fields)}")
        file_fields = {}
    folded = fold_field_names(file_fields)
    problems.extend(_case_variants(source, folded))
    twice = {name for name, given in folded.items() if len(given) > 1}  # reported above, never picked
    file_fields = {name: given[0][1] for name, given in folded.items() if name not in twice}
    known = set(KNOWN_FIELDS) | set(settings.required) | set(settings.patterns)
    problems.extend(near_miss_problems(source, {given[0][0]: given[0][1] for given in folded.values()}, known))
    problems.extend(near_miss_problems(f"{source}: {INVENTORY}", inventory_fields or {}, known))
    bombs = _bombs(file_fields)
    problems.extend(
        f"{source}: {name}: expands to more than {MAX_FIELD_VALUES} values (a YAML alias bomb?)" for name in bombs
    )
    inventory = inventory_fields or {}
    fields = list(KNOWN_FIELDS) + sorted((set(settings.required) | set(settings.patterns)) - set(KNOWN_FIELDS))
    values: dict[str, Any] = {}
    defaulted = False
    for name in fields:
        if name in bombs or name in twice:  # reported above; never walked again
            continue
        value = _field(source, name, file_fields, inventory, settings, problems, text_fields)
        if value is _DEFAULTED:
            values[name], defaulted = settings.access_default, True
        elif value is not _ABSENT:
            values[name] = value

    problems.extend(_consistency_problems(source, values, file_fields, inventory))
    if problems:
        return None, problems, defaulted
    meta = DocumentMeta(
        doc_id=values["doc_id"],
        version=values["version"],
        title=values["title"],
        access=values["access"],
        effective_from=values.get("effective_from"),
        effective_to=values.get("effective_to"),
        status=values.get("status", "current"),
        superseded_by=values.get("superseded_by"),
        tags=values.get("tags", ()),
    )
    return meta, [], defaulted


def _value_children(value: Any) -> Sequence[Any]:
    if isinstance(value, dict):
        return [part for pair in value.items() for part in pair]
    return value if isinstance(value, (list, tuple)) else ()


def _bombs(fields: Mapping[str, Any]) -> list[str]:
    """Names of fields whose value is a YAML alias bomb, sorted.

    YAML aliases share one object, so a bomb costs nothing until something walks it;
    a field that expands past MAX_FIELD_VALUES is reported and never looked at again.
    """
    from ingest import safe_yaml  # YAML is loaded where it is read: a run with nothing to read never loads it

    return sorted(
        (
            name
            for name, value in fields.items()
            if safe_yaml.expanded_size(value, _value_children, MAX_FIELD_VALUES) > MAX_FIELD_VALUES
        ),
        key=str,
    )


def _consistency_problems(
    source: str, values: Mapping[str, Any], file_fields: Mapping[str, Any], inventory: Mapping[str, Any]
) -> list[str]:
    """Checks between fields, made only on fields that were valid on their own."""
    problems = []
    start, end = values.get("effective_from"), values.get("effective_to")
    if start and end and end < start:
        problems.append(f"{source}: effective_to: {end.isoformat()} is before effective_from {start.isoformat()}")
    status_given = not (_is_missing(file_fields.get("status")) and _is_missing(inventory.get("status")))
    status = values.get("status", "current" if not status_given else None)
    successor = values.get("superseded_by")
    successor_given = not (
        _is_missing(file_fields.get("superseded_by")) and _is_missing(inventory.get("superseded_by"))
    )
    if status == "superseded" and not successor_given:
        problems.append(f"{source}: status: 'superseded' without superseded_by")
    if status == "current" and successor is not None:
        problems.append(f"{source}: superseded_by: {successor!r} but status is 'current'")
    own_key = f"{values.get('doc_id')}@{values.get('version')}"
    if successor is not None and successor == own_key:
        problems.append(f"{source}: superseded_by: {successor!r} names this document itself")
    return problems


def found_doc_id(file_fields: Any, inventory_fields: Mapping[str, Any] | None) -> str | None:
    """Whatever doc_id a rejected file declares (for its problem record), or None."""
    for fields in (_first_values(file_fields), inventory_fields or {}):
        if isinstance(fields, Mapping):
            text = _as_text(fields.get("doc_id"))
            if text:
                return text
    return None


Visibility = tuple[tuple[str, tuple[str, ...]], ...]  # (field, every value declared for it), sorted
VISIBILITY_NAMES = ("access", "effective_from", "effective_to", "status")


def declared_visibility(
    file_fields: Any, inventory_fields: Mapping[str, Any] | None, access_default: str
) -> Visibility:
    """Who a file says may read it and when — access, dates, status — as written, valid or not:
    every value given (file and inventory), else the default. For a rejected file whose stored
    version must be kept only while it is exactly as visible as the folder now says."""
    defaults: dict[str, str] = {"access": access_default, "effective_from": "", "effective_to": "", "status": "current"}
    declared = []
    for name, default in defaults.items():
        values: set[str] = set()
        for fields in (file_fields, inventory_fields or {}):
            given = fold_field_names(fields).get(name, []) if isinstance(fields, Mapping) else []
            values.update(_declared_text(value) for _, value in given if value is not None)
            if fields is file_fields and any(value is None for _, value in given):
                values.add("" if name == "access" else default)  # `access:` given empty: no label, never the default
        declared.append((name, tuple(sorted(values)) if values else (default,)))
    return tuple(declared)


def _declared_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return value.isoformat() if isinstance(value, date) else repr(value)


def entry_visibility(entry: Mapping[str, Any] | None) -> Visibility | None:
    """The access, dates and status an inventory entry gives itself (None when it gives none)."""
    if not isinstance(entry, Mapping):
        return None
    given = {name: entry[name] for name in VISIBILITY_NAMES if entry.get(name) is not None}
    if not given:
        return None
    return tuple(pair for pair in declared_visibility({}, given, "") if pair[0] in given)


def visibility_of(meta: DocumentMeta) -> Visibility:
    """The visibility a valid document's metadata gives, in the shape of :func:`declared_visibility`."""
    return (
        ("access", (meta.access,)),
        ("effective_from", (meta.effective_from.isoformat() if meta.effective_from else "",)),
        ("effective_to", (meta.effective_to.isoformat() if meta.effective_to else "",)),
        ("status", (meta.status,)),
    )


def found_key(file_fields: Any, inventory_fields: Mapping[str, Any] | None) -> str | None:
    """``doc_id@version`` a rejected file declares, or None (to explain dangling references)."""
    doc_id = found_doc_id(file_fields, inventory_fields)
    for fields in (_first_values(file_fields), inventory_fields or {}):
        if isinstance(fields, Mapping):
            version = _as_text(fields.get("version"))
            if doc_id and version:
                return f"{doc_id}@{version}"
    return None


# ---------------------------------------------------------------------------
# inventory.yaml


def path_as_read(key: str) -> str:
    """A path as a person (and every path resolver) reads it: NFC, "/" for "\\", without empty and "."
    segments, each ".." taking back the folder before it ("sub/../a.md" is "a.md"; one above documents/
    stays, and names no file)."""
    path = unicodedata.normalize("NFC", key.strip()).replace("\\", "/")
    parts: list[str] = []
    for part in path.split("/"):
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def read_inventory(text: str, origin: str = INVENTORY) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Parse ``inventory.yaml``: path relative to ``documents/`` -> fields.

    Read with PyYAML's safe loader. Malformed entries are left out and reported; the
    well-formed ones are kept so the rest of the corpus can still be checked.
    """
    import yaml

    from ingest import safe_yaml

    try:
        data = safe_yaml.load(text, max_aliases=MAX_INVENTORY_NODES, max_nodes=MAX_INVENTORY_NODES)
    except yaml.YAMLError as exc:
        return {}, [f"{origin}: not valid YAML: {safe_yaml.describe(exc)}"]
    except RecursionError:
        return {}, [f"{origin}: not valid YAML: nested too deeply"]
    if data is None:
        return {}, []
    if not isinstance(data, Mapping):
        return {}, [f"{origin}: not a mapping of file paths to fields: {show(data)}"]
    entries: dict[str, dict[str, Any]] = {}
    problems: list[str] = []
    # A file is looked up by its key stripped of surrounding whitespace: two keys naming one file that
    # way ("a.txt" and "a.txt\u00a0"), or as a person reads a path (NFC/NFD, "./a.txt", "sub\\a.txt", "s/../a.txt"),
    # are that file given twice, never the later one picked.
    same_file: dict[str, list[str]] = defaultdict(list)
    for key in data:
        if isinstance(key, str) and key.strip():
            same_file[path_as_read(key)].append(key)
    for path, keys in sorted(same_file.items()):
        if len(keys) > 1:
            problems.append(
                f"{origin}: {path}: given {len(keys)} times, as "
                + " and ".join(show(key) for key in keys)
                + " (read as paths, these keys name one file: nothing was picked)"
            )
    for key in sorted(data, key=str):
        if isinstance(key, str) and key.strip() and len(same_file[path_as_read(key)]) > 1:
            continue  # reported above: neither entry is used
        fields = data[key]
        if not isinstance(key, str) or not key.strip():
            problems.append(f"{origin}: {show(key)}: not a file path")
        elif fields is None:
            entries[key.strip()] = {}
        elif not isinstance(fields, Mapping):
            problems.append(f"{origin}: {key}: not a mapping of fields: {show(fields)}")
        else:
            folded = fold_field_names(fields)
            twice = _case_variants(f"{origin}: {key}", folded)
            if twice:  # an entry giving a field twice is left out, like any malformed entry
                problems.extend(twice)
            else:
                entries[key.strip()] = {name: given[0][1] for name, given in folded.items()}
    return entries, problems
