"""lecture_lib/practice/notebook_client.py: a wait for a kernel message is made of short polls, so a missed wake-up costs at most
one slice, and the caller's timeout still holds."""

from __future__ import annotations

import asyncio
import time
from queue import Empty

import pytest

from lecture_lib.practice import notebook_client


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


def test_autograde_reads_a_sandboxed_kernel_in_slices(monkeypatch):
    """nbgrader's autograde runs student notebooks through SandboxedExecute: a missed wake-up there would hold a
    class's grading for a cell's whole limit, so its channels are read in slices too."""
    pytest.importorskip("nbgrader")
    from types import SimpleNamespace

    from nbclient import NotebookClient

    from lecture_lib.practice import grading

    channels = {name: MissedWakeUp(time.monotonic() + 0.2) for name in ("shell", "iopub")}

    async def start_plain(self):
        return SimpleNamespace(shell_channel=channels["shell"], iopub_channel=channels["iopub"])

    monkeypatch.setattr(NotebookClient, "async_start_new_kernel_client", start_plain)
    executor = grading.SandboxedExecute()
    client = asyncio.run(executor.async_start_new_kernel_client())
    started = time.monotonic()
    assert asyncio.run(client.shell_channel.get_msg(timeout=60)) == {"msg": "reply"}
    assert time.monotonic() - started < 2 * notebook_client.SLICE_SECONDS + 0.3
    assert not hasattr(client.iopub_channel.get_msg, "__self__"), "IOPub is read in slices too"
