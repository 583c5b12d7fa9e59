"""osfoundry/groups.py: live signals go to the channel layer when there is one, never at the
price of what was stored: without a layer an event still wakes its long-polls, and a send that
fails on a running loop is logged, not lost in a task nobody awaits."""

import asyncio
import logging

from osfoundry import wakeups
from osfoundry.groups import group_send
from rooms.events import publish_room_event, room_key


async def test_without_a_channel_layer_an_event_still_wakes_its_long_polls(settings, caplog):
    settings.CHANNEL_LAYERS = {}  # a deployment that serves no websockets
    waiter = wakeups.registry.register([room_key("no-layer")])
    try:
        await asyncio.to_thread(
            publish_room_event, {"type": "app.created", "room_id": "no-layer", "sequence": 1}
        )
        assert await waiter.wait(10) is True
    finally:
        wakeups.registry.unregister(waiter)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_a_send_that_fails_on_a_running_loop_is_logged(caplog):
    group_send("not a valid group name!", {"type": "room.event"})  # the layer refuses it

    for _ in range(1000):  # until the scheduled send has run
        if any(r.name == "osfoundry.groups" for r in caplog.records):
            break
        await asyncio.sleep(0.01)
    [record] = [r for r in caplog.records if r.name == "osfoundry.groups"]
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "could not send a group message"
    assert "group name" in str(record.exc_info[1]).lower()
