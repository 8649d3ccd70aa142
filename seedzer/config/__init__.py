"""The campaign configuration: a validated YAML schema whose defaults work with no file at all.

Every field is a dataclass field declared with :func:`~seedzer.config.fields.setting` (its default,
its doc and its check); reading walks the YAML mapping against the dataclasses and reports the first
problem as a one-line :class:`~seedzer.errors.ConfigError` naming the file and the dotted field.

- :mod:`.fields`: a field's declaration and check, the value limits every verb shares, bounded
  excerpts of bad values;
- :mod:`.yamlfile`: reading small YAML files strictly and boundedly (configuration, experiment and
  heuristic files);
- :mod:`.schema`: the walk from a mapping to checked sections and back;
- :mod:`.levels`: the ``levels`` section: each level's weight and its own settings section, declared
  by the level (:mod:`seedzer.level_table`);
- :mod:`.sections`: the house's sections and :class:`Config`;
- :mod:`.reading`: a configuration read from a file or a mapping (old key names included), and a
  CLI value checked as its field.

The names below are the package's public API; code outside the package imports them from here.
"""

from seedzer.config.fields import (
    INT64,
    MAX_JOBS,
    MAX_MINUTES,
    MAX_POOL,
    MAX_TIMEOUT,
    MIN_TIMEOUT,
    WEIGHT,
    Check,
    between,
    excerpt,
    finite,
    setting,
)
from seedzer.config.levels import LevelsConfig, parse_levels
from seedzer.config.reading import check_of, check_value, config_from_dict, load_config, reference
from seedzer.config.schema import build, to_dict
from seedzer.config.sections import (
    ALLOCATION_FAMILIES,
    COST,
    COVERAGE,
    ENERGY_NAMES,
    RARITY,
    RELEASED_TVM,
    SCHEDULER_NAMES,
    UNIFORM,
    AllocationConfig,
    BoundsConfig,
    Config,
    EpochsConfig,
    FuzzConfig,
    GenerateConfig,
    KnownIssue,
    LedgerConfig,
    LimitsConfig,
    OracleConfig,
    ReproducersConfig,
    TimeoutConfig,
    stage_limits,
)
from seedzer.config.yamlfile import MAX_YAML_BYTES, MAX_YAML_VALUES, load_bounded, parse_yaml, read_text, read_yaml

__all__ = [
    "ALLOCATION_FAMILIES", "COST", "COVERAGE", "ENERGY_NAMES", "INT64", "MAX_JOBS", "MAX_MINUTES", "MAX_POOL",
    "MAX_TIMEOUT", "MAX_YAML_BYTES", "MAX_YAML_VALUES", "MIN_TIMEOUT", "RARITY", "RELEASED_TVM", "SCHEDULER_NAMES",
    "UNIFORM", "WEIGHT", "AllocationConfig", "BoundsConfig", "Check", "Config", "EpochsConfig", "FuzzConfig",
    "GenerateConfig", "KnownIssue", "LedgerConfig", "LevelsConfig", "LimitsConfig", "OracleConfig",
    "ReproducersConfig", "TimeoutConfig", "between", "build", "check_of", "check_value", "config_from_dict",
    "excerpt", "finite", "load_bounded", "load_config", "parse_levels", "parse_yaml", "read_text", "read_yaml",
    "reference", "setting", "stage_limits", "to_dict",
]
