"""The formula mechanism: one SymPy expression, shown, derived with, evaluated, validated."""

import math

import numpy as np
import pytest
import sympy as sp

from lecture_lib import formula, roofline, symbols
from lecture_lib.formula import Formula


def test_latex_uses_the_notation_table():
    f = Formula(symbols.t_weights, symbols.N_total * symbols.bytes_param / symbols.mem_bw, source="test")
    tex = f.latex()
    assert r"N_\mathrm{total}" in tex and r"\mathrm{mem\_bw}" in tex
    assert f._repr_latex_().startswith("$$")


def test_call_matches_exact_substitution():
    f = Formula(symbols.t_compute, 2 * symbols.B * symbols.N_active / symbols.FLOPs, source="test")
    exact = f.subs(B=3, N_active=5, FLOPs=7)
    assert exact == sp.Rational(30, 7)
    assert f(B=3, N_active=5, FLOPs=7) == pytest.approx(30 / 7)


def test_call_broadcasts_arrays_and_scalars_through_max():
    f = Formula(symbols.t, sp.Max(symbols.B, symbols.N_total), source="test")
    out = f(B=np.array([1.0, 5.0, 10.0]), N_total=4.0)
    assert np.allclose(out, [4, 5, 10])


def test_inputs_are_sorted_names():
    f = Formula(symbols.t, symbols.mem_bw + symbols.B, source="test")
    assert f.input_names == ("B", "mem_bw")


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, "3", None, True, [1, -2]])
def test_bad_input_names_the_parameter(bad):
    f = Formula(symbols.t, symbols.B * 2, source="test")
    with pytest.raises(ValueError, match="B"):
        f(B=bad)


def test_missing_and_unknown_inputs_are_named():
    f = Formula(symbols.t, symbols.B * symbols.mem_bw, source="test")
    with pytest.raises(ValueError, match="missing.*mem_bw"):
        f(B=1)
    with pytest.raises(ValueError, match="unknown.*batch"):
        f(B=1, mem_bw=1, batch=3)


def test_same_detects_algebraic_identity():
    x = symbols.B
    assert formula.same((x + 1) ** 2, x**2 + 2 * x + 1)
    assert not formula.same(x, 2 * x)


def test_show_typesets_several_formulas():
    f = Formula(symbols.t, symbols.B, source="test")
    math_obj = formula.show(f, (symbols.B_star, symbols.ratio_hw * symbols.sparsity))
    assert "aligned" in math_obj.data


def test_show_aligns_after_the_whole_left_side_even_when_it_contains_an_equals_sign():
    from lecture_lib.formula import show
    from lecture_lib.symbols import B, x_equal

    shown = show((x_equal, B + 1), roofline.T_COMPUTE).data
    assert r"x_{=} &= B + 1" in shown
    assert shown.count("&=") == 2


def test_allow_zero_lets_named_inputs_be_zero_and_only_those():
    assert roofline.T_KV(B=0, len_ctx=1000, bytes_tok=1e3, mem_bw=1e12, allow_zero="B") == 0.0
    assert roofline.T_KV(B=0, len_ctx=0, bytes_tok=1e3, mem_bw=1e12, allow_zero=("B", "len_ctx")) == 0.0
    with pytest.raises(ValueError, match="len_ctx"):
        roofline.T_KV(B=1, len_ctx=0, bytes_tok=1e3, mem_bw=1e12, allow_zero="B")
    with pytest.raises(ValueError, match="unknown input"):
        roofline.T_KV(B=0, len_ctx=1, bytes_tok=1e3, mem_bw=1e12, allow_zero="batch")


# --- derivations remembered across processes (formula.solve / formula.simplify) ---------------------------------

def test_a_remembered_derivation_is_sympys_own_and_is_read_back_from_disk(tmp_path, monkeypatch):
    import sympy as sp

    from lecture_lib import formula

    monkeypatch.setenv("LECTURE_CACHE_DIR", str(tmp_path))
    x, a = sp.symbols("x a", positive=True)
    equation = sp.Eq(a * x**2, 3)
    assert formula.solve(equation, x) == sp.solve(equation, x)
    files = list(tmp_path.rglob("solve-*.srepr"))
    assert len(files) == 1 and "sympy-" + sp.__version__ in str(files[0])
    calls = []
    monkeypatch.setattr(sp, "solve", lambda *args, **kwargs: calls.append(args) or ["not read from disk"])
    again = formula.solve(equation, x)
    assert again == [sp.sqrt(3) / sp.sqrt(a)] and not calls          # read back, not derived
    assert formula.solve(sp.Eq(a * x**2, 4), x) == ["not read from disk"]   # another equation is derived afresh


def test_a_damaged_or_unwritable_cache_only_means_deriving_again(tmp_path, monkeypatch):
    import sympy as sp

    from lecture_lib import formula

    x = sp.Symbol("x", positive=True)
    monkeypatch.setenv("LECTURE_CACHE_DIR", str(tmp_path))
    assert formula.simplify(sp.sin(x) ** 2 + sp.cos(x) ** 2) == 1
    (damaged,) = tmp_path.rglob("simplify-*.srepr")
    damaged.write_bytes(b"not SymPy data (")
    assert formula.simplify(sp.sin(x) ** 2 + sp.cos(x) ** 2) == 1
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("LECTURE_CACHE_DIR", str(blocked / "below-a-file"))     # cannot be created
    assert formula.solve(sp.Eq(2 * x, 6), x) == [3]


def _planted(tmp_path, equation, unknown, text: str):
    """Write ``text`` as the cache entry formula.solve(equation, unknown) would read."""
    import hashlib

    import sympy as sp

    from lecture_lib import formula

    key = hashlib.sha256(f"solve|{sp.srepr((equation, unknown))}|{sorted({}.items())!r}".encode()).hexdigest()[:32]
    folder = formula._cache_folder()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    (folder / f"solve-{key}.srepr").write_text(text)
    return folder


def test_a_planted_cache_entry_is_never_run(tmp_path, monkeypatch):
    """Issue 46 §4: a notebook that could write the cache folder must not get code run in the next import."""
    import pickle

    import sympy as sp

    from lecture_lib import formula

    monkeypatch.setenv("LECTURE_CACHE_DIR", str(tmp_path / "cache"))
    marker = tmp_path / "ran"
    x = sp.Symbol("x", positive=True)
    equation = sp.Eq(5 * x, 10)
    folder = _planted(tmp_path, equation, x, f"__import__('pathlib').Path({str(marker)!r}).write_text('x')")
    assert formula.solve(equation, x) == [2] and not marker.exists()
    for text in (f"Symbol(__import__('os').system('touch {marker}'))", "Add.__globals__", "Max('__import__(1)', 1)",
                 "Symbol('x').subs", "(lambda: 1)()", "Function('open')('/etc/passwd')"):
        _planted(tmp_path, equation, x, text)
        assert formula.solve(equation, x) == [2] and not marker.exists(), text
    # the old pickle entries are not read at all, whatever they hold
    (folder / "solve-anything.pickle").write_bytes(pickle.dumps(["a pickle"]))
    assert formula.solve(equation, x) == [2]


def test_a_cache_folder_others_can_write_is_not_read(tmp_path, monkeypatch):
    import sympy as sp

    from lecture_lib import formula

    monkeypatch.setenv("LECTURE_CACHE_DIR", str(tmp_path / "shared"))
    x = sp.Symbol("x", positive=True)
    equation = sp.Eq(7 * x, 21)
    folder = _planted(tmp_path, equation, x, "[Integer(99)]")
    assert formula.solve(equation, x) == [99]                    # this user's own folder: read back
    folder.chmod(0o777)
    assert formula.solve(equation, x) == [3]                     # writable by anyone: derived afresh
    folder.chmod(0o700)
    folder.parent.chmod(0o777)
    assert formula.solve(equation, x) == [3]


def test_safe_srepr_reads_back_what_the_library_derives():
    import sympy as sp

    from lecture_lib import safe_srepr

    x = sp.Symbol("x", positive=True)
    f = sp.Function("f")
    for value in ([sp.Max(0, x - 4) + sp.Rational(1, 3) * x**2], {x: sp.Float(1.5)}, sp.Eq(x, 2),
                  (sp.pi, sp.E, sp.oo, sp.sqrt(2), sp.log(x), sp.Piecewise((x, x > 1), (0, True))), f(x),
                  sp.Dummy("d"), sp.Integer(-3), [{x: 1}, {x: 2}]):
        text = safe_srepr.dumps(value)
        assert safe_srepr.dumps(safe_srepr.loads(text)) == text
    for text in ("Symbol('x').name", "open('f')", "Add(*[1])", "Integer('1; import os')", "[x for x in ()]",
                 "Symbol('x', positive=Symbol('y'))", "Add('1+1', 1)"):
        with pytest.raises(safe_srepr.UnsafeText):
            safe_srepr.loads(text)


@pytest.mark.parametrize("bad", ["x**2 - 1", None, 3.0, [], ["x"]])
def test_remembered_derivations_take_sympy_only_never_text(bad):
    from lecture_lib import formula

    with pytest.raises(ValueError, match="expression"):
        formula.simplify(bad)
    with pytest.raises(ValueError, match="equations"):
        formula.solve(bad)


def test_lambdified_is_sympys_numpy_function_without_loading_all_of_numpy():
    """formula.lambdified hands lambdify NumPy's module, not its name: the printed code and the values are
    lambdify's own, and evaluating the course's formulas loads none of the NumPy submodules that
    ``from numpy import *`` would (0.1 s in every kernel)."""
    import subprocess
    import sys

    x, y = sp.symbols("x y", positive=True)
    expression = sp.Max(x, 2) * sp.exp(-y) + sp.sqrt(x) * sp.log(y)
    ours = formula.lambdified((x, y), expression)
    theirs = sp.lambdify((x, y), expression, modules=[{"amax": formula._max_of}, "numpy"])
    points = (np.array([0.5, 2.0, 7.0]), np.array([0.1, 1.0, 30.0]))
    np.testing.assert_array_equal(ours(*points), theirs(*points))
    assert ours(3.0, 0.2) == theirs(3.0, 0.2)
    code = ("import sys, lecture_lib.roofline as r, lecture_lib.scaling as s\n"
            "r.T_STEP(**dict.fromkeys(r.T_STEP.input_names, 2.0)); s.inference_aware_optimum(target_loss=2.0, inference_tokens=1e12)\n"
            "print(sorted(m for m in ('numpy.f2py', 'numpy.testing', 'numpy.ctypeslib') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", loaded
