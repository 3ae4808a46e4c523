"""``voila``, with its executor reading the kernel's replies in half-second slices (``make present`` runs this).

Voila runs a chapter's cells with nbclient (``voila.execute.VoilaExecutor``), which under load sometimes missed
the kernel's reply and waited on an idle kernel (lecture_lib/practice/notebook_client.py explains the missed wake-up). In Voila
the wait was worse than a delay: after two idle minutes ``make present``'s culler shut the kernel down, and the
page showed the chapter without its explorers ("Kernel died" in the log; Chapter 8 in one load of three). This
launcher gives VoilaExecutor the same sliced reads as tests/notebook_runs.py and tools/build_site.py, then starts
Voila with the command line it was given.
"""

from __future__ import annotations

import sys

from voila import execute
from voila.app import main

from lecture_lib.practice.notebook_client import poll_in_slices

_start_client = execute.VoilaExecutor.async_start_new_kernel_client


async def _start_sliced_client(self):
    client = await _start_client(self)
    poll_in_slices(client.shell_channel)
    poll_in_slices(client.iopub_channel)
    return client


execute.VoilaExecutor.async_start_new_kernel_client = _start_sliced_client

if __name__ == "__main__":
    sys.exit(main())
