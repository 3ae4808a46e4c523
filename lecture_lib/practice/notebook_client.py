"""nbclient's NotebookClient, made to notice every kernel message within half a second.

Under load, an execution by nbclient sometimes sat on an idle kernel for exactly the cell's timeout (180 s in
the tests, 600 s in the site build) and then went on without an error: the kernel's reply had arrived, but
zmq.asyncio's wait on the socket's edge-triggered file descriptor was never woken, and only the poll that
pyzmq makes when the wait times out found it (the kind of missed wake-up described in
https://github.com/zeromq/pyzmq/issues/2173). Waiting in slices of at most :data:`SLICE_SECONDS` turns such a
stall into a delay of a fraction of a second. Used wherever the course runs notebooks itself: nbgrader's autograde
(:class:`lecture_lib.practice.grading.SandboxedExecute`), the site build (tools/build_site.py), ``make present``
(tools/present/voila_sliced.py) and the tests (tests/notebook_runs.py).
"""

from __future__ import annotations

import time
from queue import Empty

from nbclient import NotebookClient

SLICE_SECONDS = 0.5


def poll_in_slices(channel) -> None:
    """Replace ``channel.get_msg(timeout)`` by the same wait made of polls of at most SLICE_SECONDS."""
    wait_once = channel.get_msg

    async def get_msg(timeout: float | None = None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = SLICE_SECONDS if deadline is None else max(0.0, min(SLICE_SECONDS, deadline - time.monotonic()))
            try:
                return await wait_once(timeout=left)
            except Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = get_msg


class SlicedPollClient(NotebookClient):
    """A NotebookClient whose shell and IOPub channels are read with :func:`poll_in_slices`."""

    async def async_start_new_kernel_client(self):
        client = await super().async_start_new_kernel_client()
        poll_in_slices(client.shell_channel)
        poll_in_slices(client.iopub_channel)
        return client
