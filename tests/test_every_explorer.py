"""Every explorer of every chapter, in process: it builds with its defaults, each control moved
by one step (as a learner's key press) or to the other end of its range changes the figure or the
readout, and no move puts an error in the readout. Chapter-specific checks live in each chapter's
own test file; this one makes sure no chapter's explorer ships a dead slider."""

import ipywidgets as widgets
import pytest

from lecture_lib.explorers.base import explorer_classes

EXPLORERS = explorer_classes()
SLIDERS = (widgets.FloatSlider, widgets.FloatLogSlider, widgets.IntSlider)


def _one_step(control):
    """The value one right-arrow press gives (one left-arrow press at the top of the range)."""
    if isinstance(control, widgets.FloatLogSlider):
        exponent = control.min + round((__import__("math").log(control.value, control.base) - control.min)
                                       / control.step) * control.step
        exponent += control.step if exponent + control.step <= control.max + 1e-9 else -control.step
        return control.base ** exponent
    up = control.value + control.step
    return up if up <= control.max else control.value - control.step


def _other_end(control):
    if isinstance(control, widgets.Dropdown):
        values = [o[1] if isinstance(o, tuple) else o for o in control.options]
        return next(v for v in values if v != control.value)
    if isinstance(control, widgets.FloatLogSlider):
        return control.base ** (control.max if control.value < control.base ** control.max / 2 else control.min)
    return control.max if control.value != control.max else control.min


def _values(dropdown):
    return [option[1] if isinstance(option, tuple) else option for option in dropdown.options]


def _shown(explorer):
    return explorer.view.shown(), explorer.readout.value


def test_every_chapter_module_has_explorers():
    modules = {cls.__module__ for cls in EXPLORERS}
    assert "lecture_lib.explorers.roofline" in modules
    assert len(EXPLORERS) >= 3


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: f"{c.__module__.rpartition('.')[2]}.{c.__name__}")
def test_each_control_changes_what_the_learner_sees(cls):
    explorer = cls()
    try:
        assert explorer.view.page_png()[:4] == b"\x89PNG"
        assert "color:#b00" not in explorer.readout.value, explorer.readout.value
        for name, control in explorer.controls.items():
            original = control.value
            moves = [_other_end(control)] + ([_one_step(control)] if isinstance(control, SLIDERS) else [])
            for target in moves:
                control.value = original
                before = _shown(explorer)
                control.value = target
                assert _shown(explorer) != before, f"{cls.__name__}: moving {name!r} to {target!r} changed nothing"
                assert "color:#b00" not in explorer.readout.value, (name, target, explorer.readout.value)
            control.value = original
    finally:
        explorer.view.figure.clear()


@pytest.mark.slow
@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: f"{c.__module__.rpartition('.')[2]}.{c.__name__}")
def test_every_model_on_every_chip_and_every_other_option_renders(cls):
    """Models against hardware (the pairing that can break: a model too big, a format a chip lacks),
    then every option of each other dropdown on its own."""
    explorer = cls()
    dropdowns = {name: c for name, c in explorer.controls.items() if isinstance(c, widgets.Dropdown)}
    hardware = next((name for name in ("chip", "system") if name in dropdowns), None)
    paired = ("model", hardware) if "model" in dropdowns and hardware else ()
    try:
        if paired:
            for model in _values(dropdowns["model"]):
                dropdowns["model"].value = model
                for device in _values(dropdowns[hardware]):
                    dropdowns[hardware].value = device
                    assert explorer.view.page_png()[:4] == b"\x89PNG"
                    assert "color:#b00" not in explorer.readout.value, (model, device, explorer.readout.value)
        for name, dropdown in dropdowns.items():
            if name in paired:
                continue
            original = dropdown.value
            for value in _values(dropdown):
                dropdown.value = value
                assert "color:#b00" not in explorer.readout.value, (name, value, explorer.readout.value)
            dropdown.value = original
    finally:
        explorer.view.figure.clear()
