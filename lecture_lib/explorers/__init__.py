"""Explorers: everything drawn in the page, and one module per chapter.

The shared machinery is ``base`` (the Explorer class, its figure and readout), ``sliders``,
``live_figure`` (curves painted in the browser), ``ahead`` (frames computed before the key press),
``plots``, ``agg_text`` (text drawn from remembered glyphs), ``tables`` and ``predict``; the chapter modules (``roofline``, ``moe``, ...) hold that
chapter's explorers. It may import the physics (``lecture_lib``), never ``lecture_lib.practice``.
"""
