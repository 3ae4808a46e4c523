"""Chapter 1's explorers: built once, every control changes what the learner sees, curves come
from the library's Formulas, and bad input is refused (the in-process half of the slider tests)."""

import asyncio

import numpy as np
import pytest

from lecture_lib import hardware, roofline
from lecture_lib.explorers import roofline as rx

EXPLORERS = [rx.BatchExplorer, rx.FastModeExplorer, rx.ContextExplorer]


@pytest.fixture(scope="module")
def built():
    return {cls: cls() for cls in EXPLORERS}


def test_batch_explorer_curves_are_the_library_formulas(built):
    explorer = built[rx.BatchExplorer]
    r = explorer.resolve(explorer.values)
    w = r["workload"]
    x, y = explorer.lines["total"].get_data()
    expected = roofline.T_STEP(B=x, N_active=w.n_active, N_total=w.n_total, FLOPs=r["flops"], mem_bw=r["mem_bw"],
                               bytes_param=r["bytes_param"], len_ctx=explorer.values["len_ctx"],
                               bytes_tok=w.kv_bytes_per_token(r["kv_bytes"], explorer.values["len_ctx"]))
    assert np.allclose(y, expected * 1e3)


def test_board_example_reproduces_the_lecture_balance_batch():
    explorer = rx.BatchExplorer(chip="GB200", weights="fp4")
    assert "2,500" in explorer.readout.value      # 312 × 8; the board's 300 × 8 = 2,400


def test_unknown_control_is_refused():
    with pytest.raises(ValueError, match="unknown control"):
        rx.BatchExplorer(batchsize=3)


def test_out_of_range_slider_values_are_clamped_by_the_widget():
    explorer = rx.BatchExplorer()
    explorer.controls["len_ctx"].value = 10 ** 12
    assert explorer.controls["len_ctx"].value <= 1_048_576 * 1.0001
    explorer.view.figure.clear()


def test_fast_drag_is_coalesced_into_one_redraw(monkeypatch):
    from lecture_lib.explorers import base

    explorer = rx.ContextExplorer()
    monkeypatch.setattr(base, "_kernel_loop", lambda: asyncio.get_running_loop())

    async def drag():
        start = explorer.render_count
        for value in np.geomspace(1000, 100_000, 25):
            explorer.controls["len_ctx"].value = float(value)
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return explorer.render_count - start

    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(drag()) == 1
    finally:
        loop.close()


def test_outside_a_kernel_changes_redraw_at_once_even_with_a_foreign_event_loop():
    explorer = rx.ContextExplorer()

    async def move():
        start = explorer.render_count
        explorer.controls["batch"].value = 2048.0
        return explorer.render_count - start

    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(move()) == 1
    finally:
        loop.close()


def test_compute_format_falls_back_sensibly():
    assert rx.compute_format(hardware.get("A100"), "fp8") == "bf16"
    assert rx.compute_format(hardware.get("Rubin"), "bf16") in hardware.get("Rubin").flops
    assert rx.compute_format(hardware.get("B200"), "fp4") == "fp4"


def test_balance_table_covers_every_chip():
    table = rx.balance_table()
    assert [row["chip"] for row in table] == [hardware.get(n).name for n in hardware.chip_names()]
    assert table[0]["fp8"] is None        # A100 has no FP8 units


def test_values_sent_from_the_page_add_at_most_one_stop():
    """Issue 31 §2: every distinct value sent from the page (as a value or typed) became a permanent stop;
    3,000 updates made 6,017 stops and a 43 s wait. Now the slider keeps its own stops and the latest other."""
    from lecture_lib.explorers import sliders

    control = sliders.log_slider("batch B (sequences)", 1024, 1, 100_000)
    own = len(control.stops)
    for value in range(1001, 4001):                    # 3,000 values between its stops
        control.value = float(value) + 0.5
    assert len(control.stops) == own + 1 and control.value == 4000.5
    control.typed.value = "2,345"
    assert len(control.stops) == own + 1 and control.value == 2345
    control.index = 0                                  # back onto one of its own stops: the typed one stays
    assert len(control.stops) == own + 1 and 2345 in control.stops


def test_a_log_slider_refuses_an_exponent_it_cannot_raise_ten_to():
    import traitlets

    from lecture_lib.explorers import sliders

    control = sliders.log_slider("batch B (sequences)", 1024, 1, 100_000)
    for bad in (1e308, float("inf"), float("nan"), -1e4):
        with pytest.raises(traitlets.TraitError, match="exponent"):
            control.max = bad
    assert control.max == pytest.approx(5)


def test_a_dropdown_message_without_a_choice_is_ignored():
    """A page update of ``index: null`` left Chapter 1's readout stuck on ``KeyError: None``."""
    explorer = rx.BatchExplorer()
    chip = explorer.controls["chip"]
    before = (chip.value, explorer.readout.value)
    chip.set_state({"index": None})                   # as the page's message arrives
    assert (chip.value, explorer.readout.value) == before
    assert "KeyError" not in explorer.readout.value
