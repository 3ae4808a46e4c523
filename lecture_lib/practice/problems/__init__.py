"""Each chapter's practice problems, one module per chapter (``ch01.py`` ... ``ch11.py``), and the quiz and
exam bank (``quiz01.py`` ... ``quiz10.py``: problems N.101 and up, released only through nbgrader from ``quizzes/``).

A module registers its problems with :func:`lecture_lib.practice.registry.register` when it is imported;
importing this package imports every ``chNN`` module here, in chapter order, then every ``quizNN`` module, so a
new file is picked up without being listed. :func:`lecture_lib.practice.registry.problem_ids` lists the practice
problems only; ``problem_ids(..., bank=True)`` adds the bank's.
"""

import importlib
import os
import pkgutil
import re

CHAPTERS = tuple(sorted(info.name for info in pkgutil.iter_modules([os.path.dirname(os.path.abspath(__file__))])
                        if re.fullmatch(r"ch\d\d", info.name)))
QUIZZES = tuple(sorted(info.name for info in pkgutil.iter_modules([os.path.dirname(os.path.abspath(__file__))])
                       if re.fullmatch(r"quiz\d\d", info.name)))

for _name in CHAPTERS + QUIZZES:
    importlib.import_module(f"{__name__}.{_name}")
