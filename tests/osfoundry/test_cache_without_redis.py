"""With REDIS_URL the cache is Redis; while Redis is unreachable a read is a miss and a write
is dropped (what we cache can be computed again), never an error that would answer 500."""

from osfoundry.cache import ForgivingRedisCache
from tests.servers import free_port


def unreachable_cache() -> ForgivingRedisCache:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    return ForgivingRedisCache(url, {"OPTIONS": {"socket_connect_timeout": 1}})


def test_reads_miss_while_redis_is_unreachable():
    cache = unreachable_cache()
    assert cache.get("highlight:abc", "default") == "default"
    assert cache.get_many(["a", "b"]) == {}
    assert cache.has_key("a") is False


def test_writes_are_dropped_while_redis_is_unreachable():
    cache = unreachable_cache()
    cache.set("a", 1)
    cache.set_many({"a": 1, "b": 2})
    assert cache.add("a", 1) is False
    assert cache.delete("a") is False
