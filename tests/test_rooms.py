"""The library's three rooms (docs/library.md, "Layout"): the physics in ``lecture_lib/``, everything drawn
in the page in ``lecture_lib/explorers/``, the problems and their judging in ``lecture_lib/practice/``.

Every import of every module is read from its source (imports inside functions too), and the graph must
have no circle and no import from a lower room into a higher one: physics < explorers < practice.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lecture_lib"
RANK = {"physics": 0, "explorers": 1, "practice": 2}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in ("explorers", "practice") else "physics"


def imports_of(module: str) -> set[str]:
    """The course's modules that ``module`` imports anywhere in its source, as full names."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            candidates = [target] + [f"{target}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        found |= {name for name in candidates if name in MODULES and name != module}
    return found


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Every module's imports of the course's modules (parsed when a test first asks, not at collection, which
    every test worker repeats)."""
    return {module: imports_of(module) for module in MODULES}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of two or more modules (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_the_three_rooms_exist_and_say_what_lives_there():
    for name in ("lecture_lib", "lecture_lib.explorers", "lecture_lib.practice", "lecture_lib.practice.problems"):
        doc = ast.get_docstring(ast.parse(MODULES[name].read_text(encoding="utf-8")))
        assert doc and len(doc.split()) >= 15, f"{name}/__init__.py should say what lives there"
    assert {room(m) for m in MODULES} == set(RANK)


def test_the_import_graph_has_no_circle():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_circle():
    """The check above can fail: a graph with a loop through three modules is reported."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_higher_room(module):
    higher = sorted(target for target in import_graph()[module] if RANK[room(target)] > RANK[room(module)])
    assert not higher, f"{module} ({room(module)}) imports {higher}: the physics never imports an explorer " \
                       f"or a problem, and an explorer never imports practice"


def test_every_chapter_has_its_explorers_and_its_problems():
    chapters = sorted(m for m in MODULES if m.startswith("lecture_lib.practice.problems.ch"))
    assert [m.rpartition(".")[2] for m in chapters] == [f"ch{n:02d}" for n in range(1, len(chapters) + 1)]
    assert len(chapters) >= 9
    for physics in ("roofline", "moe", "pipeline", "pipeline_memory", "scaling", "context", "reversible", "plan"):
        assert f"lecture_lib.explorers.{physics}" in MODULES and f"lecture_lib.{physics}" in MODULES


def _docs_example(heading: str) -> str:
    text = (PACKAGE.parent / "docs" / "library.md").read_text(encoding="utf-8")
    section = text.split(heading, 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_docs_recipe_for_a_new_explorer_works():
    """docs/library.md's "Adding an explorer" example runs as written: it builds, a slider move changes the
    picture and the readout, and a frame computed ahead equals the real move's."""
    namespace: dict = {}
    exec(compile(_docs_example("### Adding an explorer"), "docs/library.md", "exec"), namespace)
    explorer = namespace["StepTermsExplorer"]()
    before = (explorer.view.shown(), explorer.readout.value)
    predicted = explorer.predict("batch", explorer.controls["batch"].stops[explorer.controls["batch"].index + 1])
    explorer.controls["batch"].index += 1
    assert (explorer.view.shown(), explorer.readout.value) != before
    if predicted is not None:
        assert predicted[-1] == explorer.readout.value
