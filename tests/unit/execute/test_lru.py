"""The bounded LRU every worker-side cache keeps its entries in."""

from seedzer.execute.lru import LRU


def test_the_lru_evicts_the_least_recently_used() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3 and len(cache) == 2
