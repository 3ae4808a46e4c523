"""An output area filled by the kernel itself: ``with area: print(...); display(...)`` without the front end's help.

ipywidgets' ``Output`` captures a ``with`` block by telling the front end (its ``msg_id``) to route the cell's
messages into the widget. A browser does that on its own; a headless client cannot, so nbclient (which runs the
notebooks in ``make test``, nbgrader's autograde, the site build and Voila) does it for the widget: for every output
routed there it sends a comm message back to the kernel on the shell channel
(``nbclient/output_widget.py``, ``OutputWidget.sync_state``) while it is awaiting that same cell's
``execute_reply`` on the same socket. On a busy machine that send can swallow the socket's wake-up for the reply
(ZeroMQ signals readiness on an edge-triggered descriptor that a send on the socket may consume; the kernel-side twin
of this is https://github.com/ipython/ipykernel/pull/1529), and the run sits until the cell's timeout: Chapter 3
stalled for exactly its 60 s timeout in 5 of 5 runs under a load of two busy loops (issue 48).

:class:`KernelOutput` records what its block prints and displays in the kernel, in order, and puts it in the
widget's ``outputs`` when the block ends, so no client ever routes anything: the browser shows the same, and a
headless run sends nothing on the shell channel.
"""

from __future__ import annotations

import sys

__all__ = ["KernelOutput"]

_CLASS = None


def KernelOutput(**kwargs):  # noqa: N802 (a widget class, built on first use: ipywidgets is imported lazily)
    """An ``ipywidgets.Output`` whose ``with`` block is captured in the kernel (see the module's docstring)."""
    global _CLASS
    if _CLASS is None:
        _CLASS = _build()
    return _CLASS(**kwargs)


class _Stream:
    """sys.stdout or sys.stderr while a block runs: text appended to the block's outputs, in order."""

    def __init__(self, name: str, sink: list, original):
        self.name, self.sink, self.original = name, sink, original

    def write(self, text: str) -> int:
        if text:
            last = self.sink[-1] if self.sink else None
            if last is not None and last["output_type"] == "stream" and last["name"] == self.name:
                last["text"] += text
            else:
                self.sink.append({"output_type": "stream", "name": self.name, "text": text})
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self):
        return getattr(self.original, "encoding", "utf-8")


def _build():
    import ipywidgets as widgets

    class _KernelOutput(widgets.Output):
        def __enter__(self):
            try:
                from IPython import get_ipython
                shell = get_ipython()
            except ImportError:
                shell = None
            publisher = getattr(shell, "display_pub", None)
            if publisher is None:                     # no kernel: the plain widget's behaviour
                self._saved = None
                return super().__enter__()
            sink: list = []
            original_publish = publisher.publish

            def publish(data, metadata=None, *args, **kwargs):
                sink.append({"output_type": "display_data", "data": dict(data), "metadata": dict(metadata or {})})

            self._saved = (publisher, original_publish, sys.stdout, sys.stderr, sink)
            publisher.publish = publish
            sys.stdout, sys.stderr = _Stream("stdout", sink, sys.stdout), _Stream("stderr", sink, sys.stderr)
            return self

        def __exit__(self, *exc):
            if self._saved is None:
                return super().__exit__(*exc)
            publisher, original_publish, stdout, stderr, sink = self._saved
            publisher.publish = original_publish
            sys.stdout, sys.stderr = stdout, stderr
            self._saved = None
            if sink:
                self.outputs = tuple(self.outputs) + tuple(sink)
            return False

    return _KernelOutput
