"""SymPy objects written as text and read back without running anything: ``dumps`` and ``loads``.

``dumps(value)`` is SymPy's own ``srepr``: ``Add(Symbol('B', positive=True), Integer(2))``. ``loads`` reads that
text back through an allow-list, never through ``eval`` or ``pickle``: the text is parsed by Python's ``ast`` and
only these forms are accepted:

- a call of a SymPy class (``Add``, ``Pow``, ``Symbol``, ``Max``, ``Piecewise``, ...: a subclass of
  ``sympy.Basic`` exported by ``sympy``), or of a function built by ``Function('f')``;
- SymPy's named constants (``pi``, ``E``, ``oo``, ``zoo``, ``nan``, ``I``, ``true``, ``false``);
- numbers, ``True``/``False``/``None``, lists, tuples and dicts of the above, and keyword arguments whose values
  are constants (``positive=True``, ``precision=53``);
- a string only as the name of ``Symbol``/``Dummy``/``Function`` (letters, digits, ``_`` and ``.``) or as the
  digits of ``Integer``/``Float``/``Rational``. No other call receives text, so nothing can reach ``sympify``'s
  string parser (which does evaluate).

Anything else (an attribute, a name outside the list, a lambda, a subscript, text elsewhere) raises
:class:`UnsafeText`. Two things read text that another process wrote: the derivation cache of
:mod:`lecture_lib.formula` (a folder a notebook could write to) and the grader of
:mod:`lecture_lib.practice.grading` (answers recorded in a student's notebook), so both read it with ``loads``.
"""

from __future__ import annotations

import ast
import re

import sympy as sp

__all__ = ["UnsafeText", "dumps", "loads"]

MAX_CHARS = 2_000_000
MAX_DEPTH = 200

_CONSTANTS = {"pi": sp.pi, "E": sp.E, "oo": sp.oo, "zoo": sp.zoo, "nan": sp.nan, "I": sp.I,
              "true": sp.true, "false": sp.false, "EulerGamma": sp.EulerGamma}
_NAMED = {"Symbol", "Dummy", "Function"}                  # a string argument is a name
_NUMERIC = {"Integer", "Float", "Rational"}               # a string argument is digits
_NAME_TEXT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,99}")
_DIGITS_TEXT = re.compile(r"[-+0-9.eE_/ ]{1,400}")


class UnsafeText(ValueError):
    """The text is not a plain ``srepr`` of SymPy data; nothing of it was run."""


def dumps(value) -> str:
    """``sympy.srepr(value)``: SymPy objects, numbers, strings, and lists, tuples and dicts of them."""
    return sp.srepr(value)


#: SymPy classes ``srepr`` writes that the top-level ``sympy`` namespace does not export.
_INNER = {"ExprCondPair": sp.functions.elementary.piecewise.ExprCondPair}


def _class(name: str):
    if name in _NAMED | _NUMERIC:
        return getattr(sp, name)
    candidate = _INNER.get(name) or getattr(sp, name, None)
    if isinstance(candidate, type) and issubclass(candidate, sp.Basic):
        return candidate
    raise UnsafeText(f"{name!r} is not a SymPy class")


def _constant(node: ast.AST):
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)) and not isinstance(node.operand.value, bool):
        return -node.operand.value
    raise UnsafeText(f"keyword values must be plain constants, got {type(node).__name__}")


def _read(node: ast.AST, depth: int):
    if depth > MAX_DEPTH:
        raise UnsafeText(f"nested deeper than {MAX_DEPTH}")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            raise UnsafeText("text is only allowed as a symbol's name or a number's digits")
        return _constant(node)
    if isinstance(node, ast.UnaryOp):
        return _constant(node)
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        raise UnsafeText(f"{node.id!r} is not one of SymPy's constants")
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_read(item, depth + 1) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        if any(key is None for key in node.keys):
            raise UnsafeText("** in a dict is not allowed")
        return {_read(key, depth + 1): _read(value, depth + 1) for key, value in zip(node.keys, node.values)}
    if isinstance(node, ast.Call):
        return _call(node, depth)
    raise UnsafeText(f"{type(node).__name__} is not allowed in SymPy data")


def _call(node: ast.Call, depth: int):
    if any(isinstance(arg, ast.Starred) for arg in node.args) or any(k.arg is None for k in node.keywords):
        raise UnsafeText("* and ** arguments are not allowed")
    keywords = {k.arg: _constant(k.value) for k in node.keywords}
    if isinstance(node.func, ast.Call):          # Function('f')(x): an undefined function applied
        function = _call(node.func, depth + 1)
        if not isinstance(function, sp.core.function.UndefinedFunction):
            raise UnsafeText("only a Function('name') may be called on its own")
        return function(*[_read(arg, depth + 1) for arg in node.args], **keywords)
    if not isinstance(node.func, ast.Name):
        raise UnsafeText("calls must name a SymPy class directly (no attributes)")
    name = node.func.id
    cls = _class(name)
    args = []
    for arg in node.args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            pattern = _NAME_TEXT if name in _NAMED else _DIGITS_TEXT if name in _NUMERIC else None
            if pattern is None or not pattern.fullmatch(arg.value):
                raise UnsafeText(f"{name} may not take the text {arg.value[:40]!r}")
            args.append(arg.value)
        else:
            args.append(_read(arg, depth + 1))
    return cls(*args, **keywords)


def loads(text: str):
    """The value ``text`` (an ``srepr``) stands for, built only from SymPy's classes and constants; raises
    :class:`UnsafeText` for anything else (nothing in the text is run)."""
    if not isinstance(text, str):
        raise UnsafeText(f"text must be a str, got {type(text).__name__}")
    if len(text) > MAX_CHARS:
        raise UnsafeText(f"text longer than {MAX_CHARS:,} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError) as error:
        raise UnsafeText(f"not SymPy data: {type(error).__name__}") from None
    try:
        return _read(tree.body, 0)
    except UnsafeText:
        raise
    except RecursionError:
        raise UnsafeText("nested too deeply") from None
    except Exception as error:                   # a SymPy class refused its arguments
        raise UnsafeText(f"SymPy could not build it: {type(error).__name__}") from None
