"""Each chapter's practice problems, one module per chapter (``ch01.py`` ... ``ch09.py``).

A chapter module registers its problems with :func:`lecture_lib.practice.registry.register` when
it is imported; importing this package imports every ``chNN`` module here, in chapter order, so a
new chapter's file is picked up without being listed.
"""

import importlib
import os
import pkgutil
import re

CHAPTERS = tuple(sorted(info.name for info in pkgutil.iter_modules([os.path.dirname(os.path.abspath(__file__))])
                        if re.fullmatch(r"ch\d\d", info.name)))

for _name in CHAPTERS:
    importlib.import_module(f"{__name__}.{_name}")
