"""Issue 13: the explorers are physically honest and their readouts read like a person wrote them.
The capacity row turns red when weights (or weights + KV) exceed the chips' HBM and green when they
fit; a format the chip lacks is explained; Fast Mode's batch stays below the normal one; numbers
are humanised ("1,024 tokens", "23 h", "3.1 days")."""

import html as _html
import re

import ipywidgets as widgets
import pytest

from lecture_lib.explorers import context as cx
from lecture_lib.explorers import base, sliders
from lecture_lib import hardware, models, units
from lecture_lib.explorers import moe as mx
from lecture_lib.explorers import pipeline_memory as pmx
from lecture_lib.explorers import roofline as rx
from lecture_lib.pipeline_memory import MEMORY_TOTAL
from pristine import pristine


def _text(explorer) -> str:
    """The readout as the page reads it: cells apart, inline spans (numbers kept with their units) not."""
    inline = re.sub(r"</?span[^>]*>", "", explorer.readout.value)
    return re.sub(r"\s+", " ", re.sub("<[^>]+>", " ", inline)).replace("&gt;", ">")


def _bad(explorer) -> bool:
    return "lecture-row-bad" in explorer.readout.value


def _ok(explorer) -> bool:
    return "lecture-row-ok" in explorer.readout.value


# --- capacity --------------------------------------------------------------------------------------
def test_capacity_row_is_red_when_the_board_model_meets_one_a100():
    explorer = rx.BatchExplorer(chip="A100", n_chips=1, weights="fp4")
    assert _bad(explorer)
    assert "does not fit: 148 GB weights > 80 GB HBM" in _text(explorer)


def test_capacity_row_is_green_on_a_rack_and_red_again_at_batch_100k_and_1m_context():
    explorer = rx.BatchExplorer()
    assert _ok(explorer) and not _bad(explorer)
    assert "fits: 148 GB weights +" in _text(explorer)
    explorer.controls["batch"].value = 100_000
    explorer.controls["len_ctx"].value = 1_048_576
    assert _bad(explorer)
    assert re.search(r"does not fit: 148 GB weights \+ [\d.]+ PB KV > 13.4 TB HBM", _text(explorer))


@pytest.mark.parametrize("cls", [rx.BatchExplorer, rx.FastModeExplorer, rx.ContextExplorer,
                                 cx.ContextCostExplorer, cx.PassExplorer])
def test_every_deployment_explorer_has_the_row_and_it_flips(cls):
    explorer = cls()
    assert "fits in HBM of" in _text(explorer)
    assert _ok(explorer)
    explorer.controls["chip"].value = "A100"
    explorer.controls["model"].value = next(label for label in explorer.controls["model"].options
                                            if "405" in label)
    if "n_chips" in explorer.controls:
        explorer.controls["n_chips"].value = 1
    else:   # 72 chips: fill them with KV instead
        batch = explorer.controls["batch"]
        batch.value = batch.base ** batch.max
        explorer.controls["len_ctx"].value = explorer.controls["len_ctx"].base ** explorer.controls["len_ctx"].max
    assert _bad(explorer), _text(explorer)
    assert "does not fit" in _text(explorer)


def test_capacity_row_agrees_with_the_library():
    model = models.get("llama-3-405b")
    chip = hardware.get("H100")
    label, text, status = base.capacity_row(n_total=model.params_total, bytes_param=2, batch=8, len_ctx=8192,
                                               bytes_tok=model.kv_bytes_per_token(2), hbm_capacity=8 * chip.hbm_capacity)
    needed = MEMORY_TOTAL(N_total=model.params_total, bytes_param=2, B=8, len_ctx=8192,
                          bytes_tok=model.kv_bytes_per_token(2))
    assert status == ("ok" if needed <= 8 * chip.hbm_capacity else "bad")
    assert status == "bad" and "does not fit: 812 GB weights > 640 GB HBM" in text   # 405 B x 2 bytes on 8 H100s
    _, text, status = base.capacity_row(n_total=8e9, bytes_param=2, batch=0, len_ctx=1, bytes_tok=1,
                                           hbm_capacity=80e9)
    assert status == "ok" and text == "fits: 16 GB weights = 20% of 80 GB HBM"


def test_red_rows_carry_a_mark_not_only_a_colour_and_are_not_error_styled():
    html = base.readout_table([("a", "does not fit", "bad"), ("b", "fits", "ok"), ("c", "plain")])
    assert "✗ does not fit" in html and "✓ fits" in html and "color:#b00" not in html


def test_an_equation_in_a_label_is_not_broken_across_lines_and_the_text_is_unchanged():
    """A narrow readout wrapped "largest b that fits at P =" / "4" (a learner's walk): each short equation in a
    label is one unbreakable span, and the row's text, which the page and the browser tests read, stays the same."""
    import re

    label = "largest b that fits at P = 4 (B = b, step at B = 2,048)"
    html = base.readout_table([(label, "1,336")])
    spans = re.findall(r"<span style='white-space:nowrap'>([^<]*)</span>", html)
    assert spans == ["P = 4", "B = b", "B = 2,048"]
    cell = re.search(r"<td[^>]*>(.*?)</td>", html).group(1)
    assert re.sub(r"<[^>]+>", "", cell) == label
    assert "a &lt; <span style='white-space:nowrap'>b = c</span>" in base.readout_table([("a < b = c", "1")])


def test_a_number_and_its_unit_stay_on_one_line_and_the_text_is_unchanged():
    """A narrow readout wrapped "186" / "GB HBM3e" (a learner's walk): each number and the unit after it is one
    unbreakable span, and the value's text stays the same."""
    import re

    value = "does not fit: 148 GB weights + 2.33 × 10¹⁵ tokens > 186 GB HBM3e, 259 T tokens, 1,336"
    html = base.readout_table([("fits?", value)])
    spans = re.findall(r"<span style='white-space:nowrap'>([^<]*)</span>", html)
    assert spans == ["148 GB", "2.33 × 10¹⁵ tokens", "186 GB", "259 T tokens"]
    cell = re.findall(r"<td[^>]*>(.*?)</td>", html)[1]
    assert _html.unescape(re.sub(r"<[^>]+>", "", cell)) == value


def test_ch2_and_ch4_rows_turn_red_when_weights_do_not_fit():
    scale_up = mx.ScaleUpExplorer(system="HGX A100")
    scale_up.controls["model"].value = next(o for o in scale_up.controls["model"].options if o.startswith("kimi-k2"))
    scale_up.controls["weights"].value = "bf16"
    assert _bad(scale_up) and "does not fit" in _text(scale_up)
    scale_up.controls["model"].value = next(o for o in scale_up.controls["model"].options if o.startswith("llama-3.1-8b"))
    assert _ok(scale_up)
    latency = pmx.LatencyExplorer(P=1, E=1)
    assert _bad(latency)
    latency.controls["E"].value = 576
    assert _ok(latency)
    memory = pmx.MemoryExplorer()
    memory.controls["b"].value = memory.controls["b"].base ** memory.controls["b"].max
    memory.controls["len_ctx"].value = 1_048_576
    assert _bad(memory)


# --- impossible settings ---------------------------------------------------------------------------
def test_a_format_the_chip_lacks_is_explained_not_silently_swapped():
    explorer = rx.BatchExplorer(chip="A100", weights="fp4")
    assert "lecture-row-note" in explorer.readout.value
    assert "A100 has no fp4 units: weights stored in fp4, multiplied in bf16" in _text(explorer)
    explorer.controls["chip"].value = "B200"
    assert "lecture-row-note" not in explorer.readout.value
    cost = cx.ContextCostExplorer(chip="A100", precision="fp8")
    assert "A100 has no fp8 units" in _text(cost)


def test_fast_batch_stays_below_the_normal_batch():
    explorer = rx.FastModeExplorer()
    normal, fast = explorer.controls["batch_normal"], explorer.controls["batch_fast"]
    for value in (2, 100, 2048, 100_000):
        normal.value = value
        fast.value = fast.base ** 5          # try to push the fast batch past the normal one
        assert fast.value < normal.value, (value, fast.value)
    normal.value = 2
    assert fast.value < 2


def test_a_fast_batch_with_no_room_left_is_disabled_and_a_page_index_past_its_end_is_put_back():
    """A learner's walk: with the normal batch at 2, the fast batch has one stop left (1); the page's slider of
    one position ran its handle off the track on a drag and sent an index past the end, and the readout went
    blank. The slider is disabled while it has one stop, and an index past the end is put back."""
    explorer = rx.FastModeExplorer()
    normal, fast = explorer.controls["batch_normal"], explorer.controls["batch_fast"]
    normal.value = 2
    assert fast.stops == (1.0,) and fast.disabled
    assert fast._options_labels == ("1", "1")      # the page's slider needs two positions (noUiSlider)
    fast.index = 1                       # what the page sent
    assert (fast.index, fast.value, fast._options_labels) == (0, 1.0, ("1", "1"))
    assert "fast: speed, price" in _text(explorer)
    # a learner's walk: the slider greyed out "with no message explaining why"
    assert "1, the only batch below the normal one: raise the normal batch to move it" in _text(explorer)
    normal.value = 960
    assert not fast.disabled and fast.value == 64 and "the only batch below" not in _text(explorer)
    fast.index = len(fast.stops)         # past the top of a slider with room
    assert fast.stops[fast.index] == fast.value == 64
    fast.disabled = True                 # disabled by its explorer: stays so whatever the range
    normal.value = 2
    normal.value = 960
    assert fast.disabled


def test_a_log_slider_sends_its_handle_and_its_track_apart_handle_on_the_page_s_track():
    """ipywidgets' page view skips a new track (and a disabled state) sent in the message that also moves the
    handle: the move echoes back as the view's own change. The fast batch's track narrowed with its handle
    (normal batch 960 -> 50 or 2) never reached the page. Narrowing sends the handle first (it fits the old
    track), widening the track first; never both in one message."""
    explorer = rx.FastModeExplorer()
    normal, fast = explorer.controls["batch_normal"], explorer.controls["batch_fast"]
    sent = []
    send = fast.send_state
    fast.send_state = lambda key=None: (sent.append({key} if isinstance(key, str) else set(key)), send(key))[1]
    for value, handle_first in ((50, True), (2, True), (960, False)):
        sent.clear()
        normal.value = value
        messages = [m for m in sent if m & {"index", "_options_labels"}]
        assert all(len(m & {"index", "_options_labels"}) == 1 for m in messages), (value, sent)
        order = ["index" if "index" in m else "track" for m in messages]
        assert order == (["index", "track"] if handle_first else ["track", "index"]), (value, sent)


def test_slow_mode_says_when_four_times_the_normal_batch_does_not_fit():
    explorer = rx.FastModeExplorer()
    assert "do not fit in HBM" not in _text(explorer)         # 4 × 960 sequences of 8K tokens fit on the rack
    explorer.controls["batch_normal"].value = 50_000
    workload, bytes_param = explorer._workloads[explorer.controls["model"].value], rx.BYTES["fp4"]
    rack = hardware.get("GB200").hbm_capacity * 72
    assert MEMORY_TOTAL(N_total=workload.n_total, bytes_param=bytes_param, B=200_000, len_ctx=8192,
                        bytes_tok=workload.kv_bytes_per_token(rx.BYTES["fp8"], 8192)) > rack
    assert "25% of the speed, but 200,000 sequences do not fit in HBM" in _text(explorer) and _bad(explorer)


def test_chips_beyond_the_scale_up_domain_are_flagged_as_leaving_the_fast_network_out():
    explorer = rx.BatchExplorer()
    assert "scale-up domain" not in _text(explorer)           # 72 GB200: one NVL72 rack
    explorer.controls["n_chips"].value = 73
    assert "73 exceeds the GB200 scale-up domain (72 chips)" in _text(explorer) and _bad(explorer)
    explorer.controls["chip"].value = "Rubin Ultra"           # a 144-chip domain
    assert "scale-up domain" not in _text(explorer)
    explorer.controls["chip"].value = "H100"                  # eight per HGX box
    assert "73 exceeds the H100 scale-up domain (8 chips)" in _text(explorer)


def test_the_memory_explorer_counts_the_idle_stages_you_pay_for():
    memory = pmx.MemoryExplorer()
    memory.controls["P"].value = 8
    assert "idle stages you pay for 0 of 8 (0% of the GPUs)" in _text(memory)      # P micro-batches in flight
    memory.controls["batch_mode"].value = "fixed"
    assert "idle stages you pay for 7 of 8 (88% of the GPUs)" in _text(memory)     # one micro-batch takes turns
    memory.controls["P"].value = 1
    assert "idle stages you pay for 0 of 1 (0% of the GPUs)" in _text(memory)


def test_counts_are_integer_sliders():
    from lecture_lib.explorers import pipeline as px

    explorer = px.StageBoundaryExplorer()
    assert isinstance(explorer.controls["layers_per_stage"], widgets.IntSlider)
    for cls in base.explorer_classes():
        controls = cls.__new__(cls).controls_()      # the controls as built, without drawing the figure
        assert controls.keys() == set(explorer.controls) if cls is px.StageBoundaryExplorer else controls
        for name, control in controls.items():
            if any(word in control.description.lower() for word in ("micro-batches", "layers", "stages", "gpus",
                                                                    "chips", "racks", "rounds")):
                whole = isinstance(control, sliders.LogSlider) and control.whole      # a count over decades
                assert isinstance(control, (widgets.IntSlider, widgets.Dropdown)) or whole or "(" in control.description \
                    and "tokens" in control.description, (cls.__name__, name)


def test_a_whole_number_log_slider_counts_in_whole_numbers_set_or_typed():
    """Chapter 4's E (GPUs per stage) spans 1 to 576 over the scale-up domains and the powers of two between: a
    learner's slow drag over its 576 one-GPU steps froze the figure for 3 s (no prediction covered it)."""
    explorer = pmx.LatencyExplorer()
    e = explorer.controls["E"]
    assert e.whole and len(e.stops) <= 13 and {8.0, 72.0, 576.0} <= set(e.stops)
    e.typed.value = "7.4"                     # typed into its readout
    assert e.value == 7 and "weight-fetch floor, E = 7 GPUs" in _text(explorer)
    e.value = 300.6
    assert e.value == 301 and e.label == "301" and "weight-fetch floor, E = 301 GPUs" in _text(explorer)
    with pytest.raises(ValueError, match="whole numbers"):
        sliders.log_slider("GPUs", 8, 1, 576, stops=[1.5], whole=True)



def test_chips_working_together_is_a_whole_number_log_slider_over_the_scale_up_domains():
    """Chapter 1's "chips working together" (1 to 144) stops on the powers of two and the chips' scale-up domains
    (8, 72, 144): a learner's slow drag over 144 one-chip steps froze the figure for up to 1.8 s. A typed count
    between stops is kept, in whole chips, in every row that names it."""
    explorer = rx.BatchExplorer()
    chips = explorer.controls["n_chips"]
    assert chips.whole and chips.stops == (1, 2, 4, 8, 16, 32, 64, 72, 128, 144) and chips.value == 72
    chips.typed.value = "96.4"
    assert chips.value == 96 and chips.label == "96" and "96 × GB200" in _text(explorer)
    assert "96 exceeds the GB200 scale-up domain (72 chips)" in _text(explorer)

# --- readout formatting ----------------------------------------------------------------------------
@pytest.mark.parametrize("value, text", [(1024, "1,024 tokens"), (128, "128 tokens"), (200_000, "200,000 tokens"),
                                         (1_048_576, "1.05 M tokens")])
def test_tokens(value, text):
    assert units.tokens(value) == text


@pytest.mark.parametrize("seconds, text", [(0.0144, "14.4 ms"), (30, "30 s"), (300, "5 min"), (3600, "1 h"),
                                           (23 * 3600, "23 h"), (3.1 * 86400, "3.1 days"), (86400, "1 day"),
                                           (2.5 * 365.25 * 86400, "2.5 years"), (5400, "1.5 h")])
def test_duration(seconds, text):
    assert units.duration(seconds) == text


def test_whole():
    assert units.whole(2499.6) == "2,500" and units.whole(7) == "7"


def test_count_log_sliders_read_whole_numbers_and_keep_a_typed_round_value():
    batch = sliders.log_slider("batch", 1024, 1, 100_000)
    assert batch.readout_format == ".0f"
    batch.value = 3600                              # what typing 3600 into the readout sends
    assert batch.value == 3600 and format(batch.value, batch.readout_format) == "3600"
    wide = sliders.log_slider("params", 1e11, 1e9, 2e12)
    assert wide.readout_format == ".3g"


def test_long_labels_are_not_cut_off():
    explorer = rx.BatchExplorer()
    for control in explorer.controls.values():
        assert int(control.style.description_width.rstrip("px")) >= len(control.description) * 7
    explorer.view.figure.clear()


def test_readouts_use_thousands_separators_and_tokens():
    explorer = rx.ContextExplorer()
    assert re.search(r"Goldilocks context [\d,]+ tokens", _text(explorer))
    explorer.view.figure.clear()


# --- issue 14 in Chapter 2: at batch 1 an MoE step reads only the k experts its token touches ------
def test_scale_up_explorer_shows_the_batch1_floor_of_the_experts_touched():
    from lecture_lib import moe, roofline

    model = models.get("deepseek-v3")
    label = next(key for key, sized in mx.sized_models().items() if sized.params_total == model.params_total)
    explorer = mx.ScaleUpExplorer(system="GB200 NVL72", model=label)
    bytes_param = mx.WEIGHT_FORMATS[explorer.controls["weights"].value]
    system = hardware.get_system("GB200 NVL72")
    read = roofline.params_read(model, tokens=1)
    expected = moe.WEIGHT_FETCH_FLOOR(N_total=read, bytes_param=bytes_param, mem_bw=system.hbm_bandwidth)
    every = moe.WEIGHT_FETCH_FLOOR(N_total=model.params_total, bytes_param=bytes_param, mem_bw=system.hbm_bandwidth)
    text = _text(explorer)
    assert f"{units.seconds(expected)} ({units.count(read)} params read" in text
    assert units.seconds(every) in text and expected < every / 10      # DeepSeek-V3: 8 of 256 experts
    x, y = explorer.lines["floor_batch1"].get_data()
    assert abs(y[0] / 1e3 - moe.WEIGHT_FETCH_FLOOR(N_total=read, bytes_param=bytes_param,
                                                   mem_bw=x[0] * system.chip.hbm_bandwidth)) < 1e-12


def test_scale_up_explorer_says_a_dense_model_reads_everything_at_batch_1():
    dense = next(key for key in mx.sized_models() if key.startswith("llama-3-70b"))
    explorer = mx.ScaleUpExplorer(model=dense)
    assert "the same: every parameter is read" in _text(explorer)
    x, y = explorer.lines["floor_batch1"].get_data()
    assert all(v != v for v in y)          # no line drawn (NaN) for a dense model


@pytest.mark.parametrize("cls", base.explorer_classes(), ids=lambda c: c.__name__)
def test_readouts_show_text_not_escaped_markup(cls):
    """readout_table escapes values once: a row that passes markup or pre-escaped text would show
    "<i>", "<a href=...>" or "&#x27;" to the learner (Chapter 8's quote and source rows did)."""
    shown = pristine(cls).readout.value
    assert "&lt;" not in shown and "&amp;" not in shown, shown[:300]


def test_a_linear_slider_reads_half_a_month_as_0_5_not_0_500():
    """The page formats a slider's readout with d3-format, whose plain "g" keeps trailing zeros ("0.500"); the
    default trims them (a learner read "deployment (months) 0.500", issue 29). The static site reads the same spec."""
    import importlib.util
    from pathlib import Path

    months = sliders.slider("deployment (months)", 0.5, 0.5, 24, 0.5)
    assert months.readout_format == ".3"          # d3: no type is "~g", trailing zeros trimmed
    spec = importlib.util.spec_from_file_location("build_site", Path(__file__).resolve().parents[1] / "tools" /
                                                  "build_site.py")
    build_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build_site)
    assert build_site._number(0.5, months.readout_format) == "0.5"
    assert build_site._number(12.0, months.readout_format) == "12"


def test_a_floor_for_weights_that_do_not_fit_says_it_is_hypothetical_and_small_shares_are_not_zero():
    """A learner's walk: Kimi K2 on an HGX H100 showed "✗ does not fit" beside a plain "weight-fetch floor 38.3 ms";
    and a rack of 16 read "671 GB weights = 0% of 214 TB HBM"."""
    scale_up = mx.ScaleUpExplorer(system="HGX H100")
    scale_up.controls["model"].value = next(o for o in scale_up.controls["model"].options if o.startswith("kimi-k2"))
    assert _bad(scale_up)
    assert re.search(r"weight-fetch floor per step \(every expert read\) [\d.]+ ms \(if the weights fitted\)", _text(scale_up))
    assert "more than there is room for" in _text(scale_up)
    scale_up.controls["system"].value = next(o for o in scale_up.controls["system"].options if "NVL72" in str(o))
    assert _ok(scale_up) and "if the weights fitted" not in _text(scale_up)
    label, text, status = base.capacity_row(n_total=671e9, bytes_param=1, batch=0, len_ctx=1, bytes_tok=1,
                                            hbm_capacity=214e12)
    assert status == "ok" and "= 0.31% of" in text
