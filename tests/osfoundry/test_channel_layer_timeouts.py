"""The websocket feed's channel layer on Redis reads for longer than its blocking pop waits:
otherwise an idle feed's consumer could time out just before Redis answered, and die with its
websocket (redis-py 8 gives up reading after 5 s, channels_redis blocks for 5 s)."""

from channels_redis.core import RedisChannelLayer
from channels_redis.utils import create_pool

from osfoundry.settings import redis_channel_layer


def test_the_channel_layer_reads_longer_than_its_blocking_pop_waits():
    config = redis_channel_layer("redis://127.0.0.1:6379/0", "test")["CONFIG"]
    pool = create_pool(dict(config["hosts"][0]))
    assert pool.connection_kwargs["socket_timeout"] > RedisChannelLayer.brpop_timeout
    assert pool.connection_kwargs["db"] == 0
