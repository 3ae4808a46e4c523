"""tools/notebook_client.py: a wait for a kernel message is made of short polls, so a missed wake-up costs at most
one slice, and the caller's timeout still holds."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from queue import Empty

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import notebook_client  # noqa: E402


class MissedWakeUp:
    """A channel whose message is there from ``ready_at`` but is only seen by a poll that starts after it (a
    wait already in progress is never woken), as with a missed edge-triggered wake-up."""

    def __init__(self, ready_at: float):
        self.ready_at, self.waits = ready_at, []

    async def get_msg(self, timeout=None):
        self.waits.append(timeout)
        started = time.monotonic()
        if started >= self.ready_at:
            return {"msg": "reply"}
        await asyncio.sleep(timeout if timeout is not None else 3600)
        raise Empty


def test_a_message_missed_by_one_wait_is_found_by_the_next_slice():
    channel = MissedWakeUp(time.monotonic() + 0.2)
    notebook_client.poll_in_slices(channel)
    started = time.monotonic()
    assert asyncio.run(channel.get_msg(timeout=None)) == {"msg": "reply"}
    assert time.monotonic() - started < 2 * notebook_client.SLICE_SECONDS + 0.3
    assert all(wait is not None and wait <= notebook_client.SLICE_SECONDS for wait in channel.waits)


def test_the_callers_timeout_still_raises_empty():
    channel = MissedWakeUp(time.monotonic() + 3600)
    notebook_client.poll_in_slices(channel)
    started = time.monotonic()
    with pytest.raises(Empty):
        asyncio.run(channel.get_msg(timeout=1.2))
    assert 1.1 < time.monotonic() - started < 1.8
