"""Virtual environments holding one TVM (a released wheel or a local one) and the few packages a plain
reproducer names: created once under a cache directory, reused, probed for the facts a bug report
states (TVM version and commit, LLVM, Python, OS).

Nothing here imports TVM: an environment is another interpreter, reached by a subprocess.
"""
