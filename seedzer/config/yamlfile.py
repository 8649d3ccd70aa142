"""Reading small YAML files strictly and boundedly.

Configuration files, experiment files and heuristic definitions are read the same way (UTF-8, at
most 1 MiB, duplicate keys refused, ``1e9`` a number as in YAML 1.2, aliases expanding to at most
:data:`MAX_YAML_VALUES` values, none containing itself), with one-line errors naming the file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from seedzer.errors import ConfigError, shown

MAX_YAML_BYTES = 1 << 20
"""Largest configuration or experiment file read (a larger one is refused, e.g. ``--config /dev/zero``)."""
MAX_YAML_VALUES = 1_000_000
"""Most values a YAML document may hold with every alias expanded (a 1 MiB file holds fewer without
aliases): a "billion laughs" nest of aliases is refused before anything walks it."""


class StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader that refuses a key repeated in one mapping (the last would silently win)."""


def _no_duplicate_keys(loader: StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: set[Any] = set()
    for key_node, _value in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # '<<: *base' merges; keys given next to it may override the merged ones
        key = loader.construct_object(key_node, deep=True)
        try:
            duplicate = key in seen
            seen.add(key)
        except TypeError:  # an unhashable key: the base constructor reports it
            continue
        if duplicate:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, f"duplicate key {key!r}", key_node.start_mark)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicate_keys)

EXPONENT_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")
"""A number in exponent notation as YAML 1.2 and Python write it (``1e9``, ``2.5E-3``): YAML 1.1, which
PyYAML implements, wants a dot and a signed exponent (``1.0e+9``) and reads ``1e9`` as a string."""
StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", EXPONENT_FLOAT, list("-+.0123456789"))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _check_aliases(root: yaml.Node) -> None:
    """Refuse a document whose aliases expand to more than :data:`MAX_YAML_VALUES` values or make a value
    contain itself; counted on the composed nodes (an alias is the node it names), each node once."""
    size: dict[int, int] = {}
    open_nodes: set[int] = set()  # the nodes on the path from the root to the one being counted
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, counted = stack.pop()
        key = id(node)
        if counted:
            open_nodes.discard(key)
            size[key] = 1 + sum(size[id(child)] for child in _children(node))
            if size[key] > MAX_YAML_VALUES:
                raise yaml.composer.ComposerError(
                    None, None, f"aliases expand this value to more than {MAX_YAML_VALUES} values", node.start_mark)
        elif key in open_nodes:
            raise yaml.composer.ComposerError(None, None, "an alias makes a value contain itself", node.start_mark)
        elif key not in size:
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node))


def load_bounded(text: str) -> Any:
    """The one YAML document of ``text`` read with :class:`StrictLoader`, its aliases checked before it is
    built (:func:`_check_aliases`); a problem is a ``yaml.YAMLError``."""
    loader = StrictLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_aliases(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


def read_text(path: Path, what: str, error: type[Exception] = ConfigError) -> str:
    """A small UTF-8 text file's content; anything else is a one-line ``error`` naming ``path``.

    Refuses directories, unreadable files, files over :data:`MAX_YAML_BYTES` and bytes that are
    not UTF-8 (a leading byte-order mark is allowed).
    """
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_YAML_BYTES + 1)
    except OSError as exc:
        raise error(f"{shown(path)}: cannot read {what} file ({exc.strerror or exc})") from None
    if len(data) > MAX_YAML_BYTES:
        raise error(f"{shown(path)}: {what} file is larger than {MAX_YAML_BYTES >> 20} MiB (not a {what} file?)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{shown(path)}: {what} file is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
                    f"{exc.start})") from None


def parse_yaml(text: str, source: str) -> Any:
    """Parse YAML text with :class:`StrictLoader`; a syntax error is a one-line ConfigError naming ``source``."""
    try:
        return load_bounded(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        pos = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise ConfigError(f"{source}: invalid YAML{pos}: {problem}") from None
    except (ValueError, OverflowError, RecursionError) as exc:  # e.g. a timestamp no datetime can hold
        raise ConfigError(f"{source}: invalid YAML: {type(exc).__name__}: {exc}") from None


def read_yaml(path: Path, what: str) -> Any:
    """Parse a YAML file; an unreadable file or a syntax error is a one-line ConfigError naming it.

    ``what`` names the kind of file in the message (``config``, ``experiment``...). Duplicate keys
    are syntax errors.
    """
    return parse_yaml(read_text(path, what), shown(path))
