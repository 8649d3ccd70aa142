"""A configuration read: from a YAML file or a parsed mapping to a checked :class:`Config`, keys under
their old names moved to their new place first, and a value given elsewhere (a CLI option) checked
as its field.

Old names: a level's settings section lists the keys that held its settings before it had a section
(its ``OLD_KEYS``: old dotted key -> its field, ``""`` for a whole old section). They are still read,
silently, from configuration files, campaign.db's recorded configuration and experiment files;
``seedzer config check`` names each one it meets and its new name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from seedzer.config.fields import Check
from seedzer.config.levels import WEIGHT_KEY, settings_class
from seedzer.config.schema import Row, build, field_check
from seedzer.config.schema import reference as section_reference
from seedzer.config.sections import Config
from seedzer.config.yamlfile import read_yaml
from seedzer.errors import ConfigError, UsageError
from seedzer.level_table import LEVELS

LEVELS_KEY = "levels"


def _level_mapping(levels: Any, name: str) -> dict[str, Any]:
    """``levels.<name>`` in its mapping form (a copy; a bare weight becomes ``{weight: w}``)."""
    given = levels.get(name)
    if given is None:
        return {}
    return dict(given) if isinstance(given, dict) else {WEIGHT_KEY: given}


def moved_keys(data: Any, source: str, notes: list[str] | None = None) -> Any:
    """``data`` (a parsed configuration mapping, left untouched) with every level's old keys moved under
    ``levels.<name>``; a note per key moved goes to ``notes``. A key given under both names is a
    one-line error."""
    if not isinstance(data, dict) or not isinstance(data.get(LEVELS_KEY, {}), dict | None):
        return data  # not a mapping: the schema walk names the problem
    out = dict(data)
    for name in LEVELS:
        section = settings_class(name)
        for old, new in (getattr(section, "OLD_KEYS", {}) if section is not None else {}).items():
            parent_key, _, key = old.rpartition(".")
            parent = out.get(parent_key) if parent_key else out
            if not isinstance(parent, dict) or key not in parent:
                continue
            value = parent[key]
            if parent_key:
                out[parent_key] = {k: v for k, v in parent.items() if k != key}
            else:
                del out[key]
            levels = dict(out.get(LEVELS_KEY) or {})
            entry = _level_mapping(levels, name)
            moved = value if not new else {new: value}
            if not isinstance(moved, dict | None):
                raise ConfigError(f"{source}: field '{old}' must be a mapping, got {type(moved).__name__}")
            target = f"{LEVELS_KEY}.{name}" + (f".{new}" if new else "")
            for field_name in (moved or {}):
                if field_name in entry:
                    raise ConfigError(f"{source}: field '{old}' is the old name of '{LEVELS_KEY}.{name}."
                                      f"{field_name}', which is given too; keep only the new one")
            entry.update(moved or {})
            levels[name] = entry
            out[LEVELS_KEY] = levels
            if notes is not None:
                notes.append(f"{source}: '{old}' is read as '{target}' (its old name)")
    return out


def config_from_dict(data: Any, source: str = "<config>", notes: list[str] | None = None) -> Config:
    """Validate a parsed YAML mapping and build a :class:`Config` (missing fields take defaults; old
    keys are read, each named in ``notes`` when given)."""
    cfg: Config = build(Config, moved_keys(data, source, notes), "", source)
    return cfg


def load_config(path: Path | None, notes: list[str] | None = None) -> Config:
    """Load and validate a YAML config file; ``None`` gives the embedded defaults."""
    if path is None:
        return Config()
    return config_from_dict(read_yaml(path, "config"), str(path), notes)


def reference(cls: Any = Config) -> list[Row]:
    """Rows (dotted field, default, doc) documenting every field of the configuration (the manual's
    reference, ``seedzer config show``), or of another schema of sections (an experiment file's)."""
    return section_reference(cls)


def check_of(dotted: str) -> Check | None:
    """The check of the configuration's field ``dotted`` (``levels.<name>.<setting>``,
    ``known_issues[].pattern``), None when it has none."""
    return field_check(Config, dotted)


def check_value(dotted: str, value: Any, culprit: str) -> None:
    """Apply the configuration's check of field ``dotted`` to a value given elsewhere (a CLI option).

    ``culprit`` names where the value came from (``--minutes``); raises a one-line
    :class:`~seedzer.errors.UsageError` naming it.
    """
    check = check_of(dotted)
    problem = check.problem(value) if check is not None else None
    if problem:
        raise UsageError(f"{culprit}: {problem}")
