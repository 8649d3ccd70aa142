"""Build hook for the optional C extension of the breakpoints coverage backend (metadata is in pyproject.toml).

The extension is optional: without a C compiler the package still installs, and the breakpoints
backend fails with one clear line naming the missing module.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension("seedzer.coverage._bpcov", ["seedzer/coverage/_bpcov.c"], optional=True,
                  extra_compile_args=["-O2", "-Wall"]),
    ],
)
