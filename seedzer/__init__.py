"""Seedzer: seed-pool driven, coverage-guided fuzzing of the Apache TVM compiler."""

__version__ = "0.1.0"
