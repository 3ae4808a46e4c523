"""Practice: the chapters' problems and everything that judges, records and delivers them.

``checks.check`` judges an answer, ``progress`` records and shows what a learner solved,
``registry`` and ``problems/chNN.py`` hold the problems, ``exercises`` writes the exercise notebooks
from the solutions and ``flashcards`` the Anki deck. It may import the physics (``lecture_lib``)
and the explorers; nothing there imports it.
"""
