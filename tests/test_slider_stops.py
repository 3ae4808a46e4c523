"""Issue 49 §3: a slider stop on every value a chapter's text asks the learner to set. Chapter 8 derived "at least
2.6 tokens accepted per step" and said to move τ there, but τ stepped by 0.25; Chapter 6 asks for a hold time of
3,600 s on a slider whose stops were 2,000 and 5,000."""

import math
import re
from pathlib import Path

import ipywidgets as widgets
import nbformat
import pytest

from lecture_lib import measurements
from lecture_lib.explorers.base import explorer_classes

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
CLASSES = {cls.__name__: cls for cls in explorer_classes()}

# "set the decode MFU to 1", "move the hold-time slider of the explorer to 300 s and 3,600 s"
INSTRUCTION = re.compile(r"\b(?:[Ss]et|[Mm]ove|[Ss]lide|[Dd]rag|[Tt]urn)\s+(?:the\s+)?\**([\w ·/÷-]{1,40}?)\**"
                         r"(?:\s+slider)?(?:\s+of the explorer)?\s+to\s+([\d.,]+(?:\s*\w+)?(?:\s+and\s+[\d.,]+\s*\w*)?)")

# Each instruction the scan finds, by chapter and the words naming the control: the explorer and its control.
WHERE = {
    ("05", "decode MFU"): ("OvertrainingExplorer", "decode_mfu"),
    ("05", "RL multiplier"): ("OvertrainingExplorer", "rl_multiplier"),
    ("06", "hold-time"): ("TierExplorer", "hold"),
}
SCALE = {"s": 1.0, "min": 60.0, "h": 3600.0}


def _positions(control) -> list[float] | None:
    if hasattr(control, "stops") and getattr(control, "stops", None):
        return [float(s) for s in getattr(control, "_every_stop", control.stops)]
    if isinstance(control, (widgets.FloatSlider, widgets.IntSlider)):
        count = round((control.max - control.min) / control.step)
        return [control.min + i * control.step for i in range(count + 1)]
    return None


def _is_stop(control, value: float) -> bool:
    return any(math.isclose(stop, value, rel_tol=1e-6, abs_tol=1e-9) for stop in _positions(control))


def instructions() -> list[tuple[str, str, list[float]]]:
    found = []
    for path in CHAPTERS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            for name, values in INSTRUCTION.findall(cell.source):
                numbers = []
                for number, unit in re.findall(r"([\d][\d,]*(?:\.\d+)?)\s*(s|min|h)?\b", values):
                    numbers.append(float(number.replace(",", "")) * SCALE.get(unit, 1.0))
                if numbers:
                    found.append((path.stem[:2], name.strip(), numbers))
    return found


def test_the_scan_finds_the_chapters_instructions():
    keys = {(chapter, name) for chapter, name, _ in instructions()}
    assert {("05", "decode MFU"), ("05", "RL multiplier")} <= {(c, n) for c, n in keys}
    assert any(c == "06" and "hold-time" in n for c, n in keys)


@pytest.mark.parametrize("chapter, name, values", instructions())
def test_every_value_the_text_asks_for_is_a_stop(chapter, name, values):
    where = next((WHERE[key] for key in WHERE if key[0] == chapter and key[1] in name), None)
    assert where, f"chapter {chapter} asks to set {name!r}: add the control it means to WHERE"
    cls, key = where
    control = CLASSES[cls]().controls[key]
    for value in values:
        assert _is_stop(control, value), (chapter, name, value)


def test_chapter8s_tokens_per_step_is_a_stop_of_tau():
    """Section 8 prints "at least 2.6 tokens accepted per step" (the speculative row's measured over its one-token
    bound, to one decimal) and asks to move τ there; the readout writes τ one way ("τ = 2.6", "τ = 1")."""
    spec = measurements.get("trtllm-llama70b-h200-batch1-spec")
    printed = round(spec.measured / spec.bound, 1)
    explorer = CLASSES["RealityExplorer"]()
    assert _is_stop(explorer.controls["tau"], printed)
    explorer.controls["tau"].value = printed
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", explorer.readout.value))
    assert f"τ = {printed:g}" in text and "τ = 1)" in text and "1.00" not in text


def test_the_hypothetical_5t_model_is_not_called_dense():
    """Issue 49 §3: Chapter 2's scale-up explorer said "dense model: no experts" and "every parameter is read" beside
    "active params 278 B" for Dwarkesh's 5 T model (5 T total, 5 T / 18 active): one model, two stories."""
    from lecture_lib.explorers import moe as mx

    label = next(key for key in mx.sized_models() if key.startswith("a 5 T"))
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", mx.ScaleUpExplorer(model=label).readout.value))
    assert "dense model" not in text and "every parameter is read" not in text
    assert "no expert layout given" in text and "278 B" in text
