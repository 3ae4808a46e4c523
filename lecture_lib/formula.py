"""One formula, three faces (DESIGN.md, "Architecture").

A :class:`Formula` holds one SymPy equation ``lhs = rhs``. From that single object

1. notebooks **show** it (``_repr_latex_``) and **derive** with it (``.rhs``, ``.subs``, SymPy's
   ``solve``/``limit``/``simplify``), asserting each step with :func:`same`;
2. explorers **evaluate** it: calling the formula runs a cached ``sympy.lambdify`` to NumPy, so
   whole arrays of slider values cost one vectorised call;
3. tests **check** it, against published numbers and against derived identities.

What the learner reads is therefore exactly what the slider computes.
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import sympy as sp

from . import symbols as _symbols
from . import validate


def _max_of(args, axis=0):
    """Elementwise max for lambdified ``Max`` that broadcasts scalars against arrays."""
    return np.maximum.reduce(np.broadcast_arrays(*args))


def _min_of(args, axis=0):
    return np.minimum.reduce(np.broadcast_arrays(*args))


# NumPy's module object, not the name "numpy": given the name, lambdify runs `from numpy import *`, which loads every
# submodule NumPy imports lazily (f2py, testing, ...), 0.1 s and 140 modules more in each kernel. The code it
# prints, and so every value, is the same.
_NUMPY_MODULES = [{"amax": _max_of, "amin": _min_of}, np]


def lambdified(inputs, expression):
    """``expression`` as a NumPy function of ``inputs`` (SymPy's lambdify; ``Max``/``Min`` broadcast)."""
    return sp.lambdify(inputs, expression, modules=_NUMPY_MODULES)


# --- derivations remembered across processes ------------------------------------------------------------------
# The physics modules derive many of their formulas when they are imported (``solve`` an equality for the
# unknown, ``simplify`` a substitution): about 6 s of SymPy on every kernel start, for the same answers each time.
# ``solve`` and ``simplify`` below are SymPy's, remembered in a folder (LECTURE_CACHE_DIR, else
# ~/.cache/lecture_lib): the key is the SymPy version, the operation and the exact input (``srepr``), so an edited
# equation is simply derived afresh. A folder that cannot be read or written only means deriving again.
# The folder is data another process could have written (a notebook run at autograde, another user of /tmp), so
# nothing in it is ever run: an entry is the result's ``srepr`` text, read back by lecture_lib.safe_srepr's
# allow-list parser (never pickle), and only from a folder owned by this user (or root) that no one else can write.

def _cache_folder():
    import os
    from pathlib import Path

    given = os.environ.get("LECTURE_CACHE_DIR")
    base = Path(given) if given else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lecture_lib"
    return base / f"derivations-sympy-{sp.__version__}"


def _trusted(folder) -> bool:
    """Whether ``folder`` is this user's (or root's) and writable by no one else, all the way up to the cache's
    own base (a folder another user controls could swap entries in)."""
    import os
    import stat

    for place in (folder, folder.parent):
        try:
            info = os.stat(place)
        except OSError:
            return False
        owners = {0, os.getuid()} if hasattr(os, "getuid") else None
        if owners is not None and (info.st_uid not in owners or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return False
    return True


def _remembered(name: str, operation, args: tuple, kwargs: dict):
    import hashlib
    import os

    from lecture_lib import safe_srepr

    key = hashlib.sha256(f"{name}|{sp.srepr(args)}|{sorted(kwargs.items())!r}".encode()).hexdigest()[:32]
    folder = _cache_folder()
    path = folder / f"{name}-{key}.srepr"
    if _trusted(folder):
        try:
            return safe_srepr.loads(path.read_text(encoding="utf-8"))
        except Exception:      # absent, unreadable, not SymPy data: derive it
            pass
    result = operation(*args, **kwargs)
    try:
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
        if _trusted(folder):
            partial = path.with_suffix(f".{os.getpid()}.part")
            partial.write_text(safe_srepr.dumps(result), encoding="utf-8")
            os.replace(partial, path)      # whole or not at all, whichever process writes first
    except OSError:
        pass
    return result


def _symbolic(name: str, value):
    """``value`` if it is SymPy (or a list or tuple of SymPy); text is refused, never parsed."""
    parts = value if isinstance(value, (list, tuple)) else [value]
    if not parts or not all(isinstance(part, sp.Basic) for part in parts):
        raise ValueError(f"{name} must be a SymPy expression or equation (or a list of them), got "
                         f"{validate._describe(value)}")
    return value


def solve(equations, *unknowns, **options):
    """``sympy.solve``, remembered across processes (see above); for the derivations the modules make on import."""
    for index, unknown in enumerate(unknowns):
        _symbolic(f"unknowns[{index}]", unknown)
    return _remembered("solve", sp.solve, (_symbolic("equations", equations), *unknowns), options)


def simplify(expression, **options):
    """``sympy.simplify``, remembered across processes like :func:`solve`."""
    return _remembered("simplify", sp.simplify, (_symbolic("expression", expression),), options)


class Formula:
    """An equation ``lhs = rhs`` in SymPy that can be shown, derived with, evaluated and tested.

    ``source`` says where it comes from (lecture moment, equation number, paper).
    Calling it with keyword arguments named after its inputs evaluates the right-hand side
    numerically (numbers or NumPy arrays, broadcast together)::

        t_compute(B=2048, N_active=37e9, FLOPs=989e12)

    ``domain`` is an optional SymPy condition on the inputs outside of which the equation means
    nothing (a balance batch past the Goldilocks context, tokens for a loss below the irreducible
    one); a call outside it raises ``ValueError`` stating the condition. A call whose value is not
    a finite real number (division by zero, overflow) raises ``ValueError`` too, never returns it.
    """

    def __init__(self, lhs: sp.Symbol, rhs: sp.Expr, *, source: str, note: str = "", domain=None):
        self.lhs = lhs
        self.rhs = _symbols._to_sympy("rhs", rhs)   # text is parsed (symbols.parse), never run
        self.source = source
        self.note = note
        self.domain = domain
        if domain is not None and not domain.free_symbols <= self.rhs.free_symbols:
            raise ValueError(f"the domain of {lhs} may only use its inputs, got {domain}")

    @property
    def name(self) -> str:
        return self.lhs.name

    @cached_property
    def inputs(self) -> tuple[sp.Symbol, ...]:
        """The free symbols of the right-hand side, sorted by name (the call signature)."""
        return tuple(sorted(self.rhs.free_symbols, key=lambda s: s.name))

    @cached_property
    def input_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.inputs)

    @cached_property
    def _input_set(self) -> frozenset[str]:
        return frozenset(self.input_names)

    @property
    def equation(self) -> sp.Eq:
        return sp.Eq(self.lhs, self.rhs, evaluate=False)

    def latex(self) -> str:
        return sp.latex(self.equation, symbol_names=_symbols.latex_names())

    def _repr_latex_(self) -> str:
        return f"$$ {self.latex()} $$"

    def __repr__(self) -> str:
        return f"Formula({self.lhs} = {self.rhs}; {self.source})"

    def subs(self, **values) -> sp.Expr:
        """The right-hand side with some inputs replaced (exact SymPy, for derivations).

        Each value is a number, a SymPy expression or formula text; text is read by
        :func:`lecture_lib.symbols.parse` (never run as code) and a value SymPy cannot take is a
        ValueError naming the input.
        """
        self._check_names(values, partial=True)
        replaced = {name: _symbols._to_sympy(name, value) for name, value in values.items()}
        return self.rhs.subs({sp.Symbol(k, positive=True, real=True): v for k, v in replaced.items()})

    @cached_property
    def _numeric(self):
        return lambdified(self.inputs, self.rhs)

    @cached_property
    def _inside(self):
        return lambdified(self.inputs, self.domain)

    def _given(self, values: dict, called_as: dict) -> str:
        shown = ", ".join(f"{called_as.get(name, name)}={validate._describe(values[name])}" for name in self.input_names)
        return shown if len(shown) <= 300 else shown[:297] + "..."

    def __call__(self, *, allow_zero: tuple[str, ...] = (), called_as: dict | None = None, **values):
        """Evaluate numerically; every input must be a positive finite number or array.

        ``allow_zero`` names inputs that may also be 0 (e.g. no inference demand at all), where the
        formula stays meaningful there. ``called_as`` maps input names to the parameter names of the
        public function making the call, so an error speaks the caller's words
        (``called_as={"N_active": "n_params"}``: "n_params must be > 0", not "N_active ...").
        """
        allow_zero = (allow_zero,) if isinstance(allow_zero, str) else tuple(allow_zero)
        called_as = dict(called_as or {})
        if values.keys() != self._input_set:       # the common case, exactly its inputs, needs no more checks
            self._check_names(values, partial=False)
        if allow_zero:
            self._check_names(dict.fromkeys(allow_zero), partial=True)
        if called_as:
            self._check_names(called_as, partial=True)
        args = [validate.number(called_as.get(name, name), values[name], allow_zero=name in allow_zero)
                for name in self.input_names]
        with np.errstate(all="ignore"):
            try:
                inside = True if self.domain is None else np.all(self._inside(*np.broadcast_arrays(*args)))
                result = np.asarray(self._numeric(*args)) if inside else None
            except (OverflowError, ZeroDivisionError):
                inside, result = True, np.asarray(np.nan)
            if not inside:
                raise ValueError(f"{self.name}() is defined only where {sp.sstr(self.domain)}; "
                                 f"got {self._given(values, called_as)}")
        finite = (math.isfinite(result) if result.ndim == 0 and result.dtype.kind in "iuf"
                  else result.dtype.kind in "iuf" and bool(np.all(np.isfinite(result))))
        if not finite:
            raise ValueError(f"{self.name}() has no finite real value at {self._given(values, called_as)} "
                             "(a division by zero, an overflow or a root of a negative number)")
        if np.ndim(result) == 0:
            return float(result)
        return np.asarray(result, dtype=float)

    def _check_names(self, values: dict, *, partial: bool) -> None:
        expected = self._input_set
        unknown = sorted(set(values) - expected)
        if unknown:
            raise ValueError(f"{self.name}() got unknown input(s) {unknown}; "
                             f"its inputs are {sorted(expected)}")
        missing = sorted(expected - set(values))
        if missing and not partial:
            raise ValueError(f"{self.name}() is missing input(s) {missing}; "
                             f"its inputs are {sorted(expected)}")


def same(a, b) -> bool:
    """True when two SymPy expressions (or Formulas) are algebraically identical.

    Numbers are accepted as they are; text is read by :func:`lecture_lib.symbols.parse` (never run
    as code, names outside the notation table become plain positive symbols). Anything else SymPy
    cannot take strictly is a ValueError naming ``a`` or ``b``.
    """
    a = a.rhs if isinstance(a, Formula) else _symbols._to_sympy("a", a)
    b = b.rhs if isinstance(b, Formula) else _symbols._to_sympy("b", b)
    return sp.simplify(a - b) == 0


def show(*items) -> "IPython.display.Math":
    """Typeset formulas or ``(lhs, rhs)`` pairs together, one per line (for notebooks)."""
    from IPython.display import Math

    names = _symbols.latex_names()
    pairs = []   # (left side or None, right side), so alignment never splits a symbol's own "="
    for item in items:
        if isinstance(item, Formula):
            pairs.append((sp.latex(item.lhs, symbol_names=names), sp.latex(item.rhs, symbol_names=names)))
        elif isinstance(item, tuple) and len(item) == 2:
            lhs, rhs = item
            lhs_tex = lhs if isinstance(lhs, str) else sp.latex(lhs, symbol_names=names)
            pairs.append((lhs_tex, sp.latex(rhs, symbol_names=names)))
        else:
            pairs.append((None, sp.latex(item, symbol_names=names)))
    if len(pairs) == 1:
        lhs, rhs = pairs[0]
        return Math(rhs if lhs is None else f"{lhs} = {rhs}")
    rows = [f"& {rhs}" if lhs is None else f"{lhs} &= {rhs}" for lhs, rhs in pairs]
    return Math(r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}")
