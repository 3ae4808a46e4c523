"""Dollar amounts in markdown that JupyterLab renders as dollars, not as math (issue 13).

JupyterLab renders a markdown cell in two passes: its ``removeMath`` hides ``$...$`` spans from
marked, then MathJax 3 typesets the rendered DOM with ``$`` as an inline delimiter and
``processEscapes`` on. So ``\\$30 / \\$150`` fails: marked turns each ``\\$`` into a plain ``$`` and
MathJax pairs them (``30 / `` becomes math). ``&#36;`` fails the same way once the browser decodes
it. What works is ``<span>&#36;</span>30``: ``removeMath`` sees no ``$``, and MathJax never pairs
delimiters across an element boundary (checked in JupyterLab 4 with Chromium:
``tests/test_browser_details.py::test_markdown_dollars_render_as_dollars``).
"""

from __future__ import annotations

import re

DOLLAR = "<span>&#36;</span>"
"""Write currency as ``f"{DOLLAR}30"``: a literal dollar in JupyterLab, in nbconvert and on GitHub."""


def currency_problems(markdown: str) -> list[str]:
    """What in one markdown cell JupyterLab would typeset as math around a dollar amount."""
    text = re.sub(r"```.*?```", "", markdown, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    problems = [f"escaped dollar {m.group(0)!r} (MathJax pairs it)" for m in re.finditer(r"\\\$\S{0,12}", text)]
    text = text.replace(DOLLAR, "").replace("&#36;", "$").replace("\\$", "$")   # the browser decodes &#36;
    text = re.sub(r"\$\$.*?\$\$", "", text, flags=re.S)          # display math first, as MathJax does
    pieces = text.split("$")
    if len(pieces) % 2 == 0:
        problems.append("an unpaired $ (a later edit would pair it with the next one)")
    for inner in pieces[1::2]:
        prose = re.sub(r"\\[A-Za-z]+(\{[^{}]*\})?", " ", inner)   # \text{len} and friends are fine
        if re.search(r"[A-Za-z]{3,}[ \n]+[A-Za-z]{3,}", prose) or re.match(r"\d[\d,.]*\s+(per|an?|and|or|to|/)(\s|$)", inner):
            problems.append(f"math that reads like prose: ${inner[:40]}$")
    return problems
