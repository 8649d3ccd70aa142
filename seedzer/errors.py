"""User-facing errors. Each carries a one-line message naming the culprit (file, field, directory)."""

from __future__ import annotations


class SeedzerError(Exception):
    """Base of every error the CLI reports as a single ``error: ...`` line with exit status 2."""


class ConfigError(SeedzerError):
    """A configuration file or value is invalid (message names the file and the field)."""


class PoolError(SeedzerError):
    """A seed pool is missing, empty or unreadable (message names the directory or file)."""


class CampaignError(SeedzerError):
    """A campaign directory cannot be created, written or resumed (message names the path)."""


class ModelError(SeedzerError):
    """An input model is corrupt or unsupported (message names the file)."""
