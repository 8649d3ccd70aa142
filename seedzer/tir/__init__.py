"""The TIR analysis toolkit the mutators and the IR shrinker build on (imports TVM).

- :mod:`seedzer.tir.ir`: node helpers, dtypes, intervals and copy-on-write replacement;
- :mod:`seedzer.tir.sites`, :mod:`seedzer.tir.walker`, :mod:`seedzer.tir.nodes`: the one walk over a
  PrimFunc that lists its mutable sites (:func:`~seedzer.tir.nodes.analyze`) and the size-weighted
  choice among them;
- :mod:`seedzer.tir.exprgen`: value ranges and safe expression generation;
- :mod:`seedzer.tir.ub`: the undefined-behaviour gate (what a mutant adds to its parent);
- :mod:`seedzer.tir.wellformed`: the validity gate :func:`~seedzer.tir.wellformed.check_well_formed`.

Importing the package itself is cheap; its modules import TVM.
"""
