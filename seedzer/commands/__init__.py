"""The verbs of the ``seedzer`` command line, one module per group of verbs (the top layer)."""
