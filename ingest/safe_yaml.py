"""YAML as ingest reads it (front matter, inventory.yaml, questions.yaml), and the one alias-bomb count.

PyYAML's safe loader (libyaml's when available), with what hostile or careless input needs:
- alias bombs refused (too many aliases, or a graph that would expand past a node limit);
- a key given twice in one mapping refused (``access: public`` then ``access: staff`` must
  not quietly pick one);
- the string fields (``version``, ``doc_id``, ``title``, ``access``, ``status``, ``superseded_by``,
  ``tags``) kept exactly as written: ``version: 2026.10`` is "2026.10", not the float 2026.1, ``007``
  stays "007" (not 7), ``doc_id: 1:30`` stays "1:30" (not the YAML 1.1 sexagesimal 90) and
  ``doc_id: 2025-01-01`` stays text (not a date);
- merge keys (``<<``) refused: ``<<: {access: staff}`` next to ``<<: {access: public}`` (or a list
  of merged mappings) would pick one value silently, where a key given twice is refused;
- an impossible date (2026-02-30) left as its text, for the metadata check to report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import yaml

from ingest.field_names import field_name

MAX_ALIASES = 100
MAX_NODES = 100_000
# scalars (and list items) kept as the text the user wrote; names read as field_names.field_name reads them
LITERAL_KEYS = frozenset({"version", "doc_id", "title", "access", "status", "superseded_by", "tags"})
_STR = "tag:yaml.org,2002:str"
_SMALL_TREE = 200  # nodes; see _check
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"
_PLAIN_SCALARS = frozenset(f"tag:yaml.org,2002:{name}" for name in ("str", "int", "float", "bool", "null", "timestamp"))
_SPECIAL_KEYS = frozenset({"tag:yaml.org,2002:merge", "tag:yaml.org,2002:value"})  # PyYAML rewrites these
_MERGE = "tag:yaml.org,2002:merge"
_NUMBERS = {"tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:bool"}

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[misc, valid-type]
    def construct_yaml_timestamp(self, node: yaml.Node) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_timestamp)


def load(text: str, *, max_aliases: int = MAX_ALIASES, max_nodes: int = MAX_NODES) -> Any:
    """The document's value; raises yaml.YAMLError with a reason a person can act on."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _check(node, max_aliases, max_nodes):
            return _constructed(loader, node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def describe(exc: yaml.YAMLError, first_line: int = 1) -> str:
    """``problem (line L, column C)``; ``first_line`` is the file line the YAML text starts on."""
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        where = f" (line {mark.line + first_line}, column {mark.column + 1})" if mark else ""
        return f"{exc.problem or exc.context}{where}"
    return " ".join(str(exc).split())


def _check(root: yaml.Node, max_aliases: int, max_nodes: int) -> bool:
    """Refuses alias bombs and keys given twice (and keeps ``version`` as written); True when the
    document is a small tree of plain values (see ``_constructed``)."""
    seen: set[int] = set()
    aliases = 0
    plain = True  # every node a str/int/float/bool/null/timestamp scalar, a map or a seq; keys plain scalars
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            aliases += 1
            if aliases > max_aliases:
                raise yaml.YAMLError(f"more than {max_aliases} aliases")
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            plain = plain and node.tag == _SEQ
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            plain = plain and node.tag == _MAP
            keys: set[str] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag == _MERGE:
                    raise yaml.MarkedYAMLError(
                        problem="merge keys (<<) are not supported: write each field out", problem_mark=key.start_mark
                    )
                if not isinstance(key, yaml.ScalarNode) or key.tag in _SPECIAL_KEYS:
                    plain = False
                if isinstance(key, yaml.ScalarNode):
                    if key.value in keys:
                        raise yaml.MarkedYAMLError(
                            problem=f"the key {key.value!r} is given twice", problem_mark=key.start_mark
                        )
                    keys.add(key.value)
                    if field_name(key.value) in LITERAL_KEYS:
                        _keep_as_written(value)
                stack.extend((key, value))
        else:
            plain = plain and node.tag in _PLAIN_SCALARS
    if not aliases and len(seen) <= min(_SMALL_TREE, max_nodes):
        # No node reached twice: a tree, which expands to exactly the nodes walked (not more than
        # max_nodes). Only small ones skip the second walk: it is recursive, and a deeply nested
        # tree must still fail there as "nested too deeply" (a tree is never deeper than its size).
        return plain
    if expanded_size(root, _node_children, max_nodes) > max_nodes:
        raise yaml.YAMLError(f"aliases expand to more than {max_nodes} nodes")
    return False


def _constructed(loader: Any, node: yaml.Node) -> Any:
    """What ``loader.construct_document(node)`` gives for a small tree of plain values (``_check``
    says which), built directly: each scalar by the loader's own constructor for its tag, mappings
    as dicts in order (a later equal key wins, as in PyYAML), sequences as lists. PyYAML's general
    walk (its bookkeeping for aliases, cycles and deferred collections, none of which a small tree
    has) was half of reading a file's front matter."""
    if isinstance(node, yaml.ScalarNode):
        return loader.yaml_constructors[node.tag](loader, node)
    if isinstance(node, yaml.SequenceNode):
        return [_constructed(loader, child) for child in node.value]
    return {_constructed(loader, key): _constructed(loader, value) for key, value in node.value}


def _keep_as_written(value: yaml.Node) -> None:
    """A plain scalar (or list of them) read as text: "0012", "1:30", "1.10", "2025-01-01", "yes"."""
    items = value.value if isinstance(value, yaml.SequenceNode) else [value]
    for item in items:
        if isinstance(item, yaml.ScalarNode) and item.tag in _NUMBERS:
            item.tag = _STR


def _node_children(node: Any) -> Sequence[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return ()


def expanded_size(root: Any, children: Callable[[Any], Sequence[Any]], limit: int) -> int:
    """How many items ``root`` holds with every shared item counted each time it appears (as a
    YAML alias expands), stopping past ``limit``; a cycle counts as past it. ``children(item)``:
    an item's direct parts (empty for a leaf). For YAML nodes here, for loaded values in metadata.
    """
    sizes: dict[int, int] = {}

    def size(item: Any) -> int:
        parts = children(item)
        if not parts:
            return 1
        known = sizes.get(id(item))
        if known is not None:
            return known
        sizes[id(item)] = limit + 1  # until counted: reached again, it is a cycle
        total = 1
        for part in parts:
            total += size(part)
            if total > limit:
                break
        sizes[id(item)] = min(total, limit + 1)
        return sizes[id(item)]

    return size(root)
