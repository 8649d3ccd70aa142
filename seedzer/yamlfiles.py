"""Reading small YAML files strictly, and the value limits every verb and file shares.

Bottom layer (standard library and PyYAML only): configuration files, experiment files and
heuristic definitions are read the same way (UTF-8, at most 1 MiB, duplicate keys refused, ``1e9``
a number as in YAML 1.2), with one-line errors naming the file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from seedzer.errors import ConfigError, shown

MAX_JOBS = 1024
"""Most worker processes a campaign (or a generation run) may ask for."""
MAX_MINUTES = 366 * 24 * 60.0
"""Longest campaign budget: a year."""
MIN_TIMEOUT, MAX_TIMEOUT = 1.0, 24 * 3600.0
"""Stage time limits: under a second only makes false hang findings; over a day is a typo."""
INT64 = 2**63 - 1
MAX_POOL = 100_000
"""Most models a pool may be asked to hold."""


MAX_YAML_BYTES = 1 << 20
"""Largest configuration or experiment file read (a larger one is refused, e.g. ``--config /dev/zero``)."""


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
        return yaml.load(text, Loader=StrictLoader)
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
