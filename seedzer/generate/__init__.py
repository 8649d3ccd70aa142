"""Seed generation: NNSmith models (or the model zoo) into seed pools, shaped by heuristics.

Public API used by the campaign:

* :func:`generate_pool` fills (or resumes) a pool directory and returns a :class:`GenerateSummary`;
* :func:`pool_models` lists a pool's model files in manifest order;
* :func:`read_manifest` returns a pool's manifest.

Importing this package is cheap: torch and NNSmith are imported only when models are generated.
"""

from seedzer.generate.driver import GenerateSummary, derive_seed, generate_pool
from seedzer.generate.errors import GenerationError
from seedzer.generate.heuristics import available_heuristics, load_heuristic
from seedzer.generate.seed_pool import pool_models, read_manifest

__all__ = [
    "GenerateSummary",
    "GenerationError",
    "available_heuristics",
    "derive_seed",
    "generate_pool",
    "load_heuristic",
    "pool_models",
    "read_manifest",
]
