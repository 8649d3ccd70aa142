"""Isolated execution: a zygote (forkserver with TVM preloaded) and the workers it forks."""
