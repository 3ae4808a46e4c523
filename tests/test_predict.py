"""Predict-then-reveal (issue 13): no spoiler without a guess, a comparison with one, and an answer that
never follows an explorer's sliders."""

import math

import pytest

from lecture_lib import hardware
from lecture_lib.explorers import predict
from lecture_lib.explorers.predict import parse_guess


@pytest.mark.parametrize("text, value", [
    ("1000", 1000), ("1,000", 1000), (" 2e3 ", 2000), ("2k", 2000), ("25%", 0.25), ("1/4", 0.25),
    ("3x", 3), ("9×", 9), ("50_000", 50000), (7, 7.0), (0.5, 0.5), ("", None), (None, None), ("   ", None),
    ("2 × 10⁵", 2e5), ("2 KB", 2000), ("1.7 kB/token", 1700), ("1 MB", 1e6), ("100 bytes", 100), ("100B", 1e11),
    # arithmetic as check() reads it: a learner guessing a batch size writes a power of two
    ("2^11", 2048), ("2**11", 2048), ("2^3^2", 512), ("3·10^4", 3e4), ("3 × 10^4", 3e4), ("(8+8)*2", 32),
    ("2(3+1)", 8), ("10²", 100), ("−2^2", -4), ("2^-1", 0.5), ("1.5 KiB", 1536), ("2 MiB/token", 2 * 1024**2)])
def test_guesses_are_read_the_way_people_write_them(text, value):
    assert parse_guess(text) == value


@pytest.mark.parametrize("text", ["abc", "1/0", "nan", "inf", True, "1..2", "1.2.3 KiB", "inf KiB", "1e400 KiB", "B^2", "2^", "2^^3", "10^400",
                                  "__import__('os')", "(1).real", "2^11 B"])
def test_unreadable_guesses_are_a_value_error(text):
    with pytest.raises(ValueError):
        parse_guess(text)


def _answer_text(prediction):
    return predict._fmt(float(prediction.answer()))


@pytest.mark.parametrize("name", sorted(predict.FACTORIES))
def test_run_all_shows_enter_a_guess_first_and_never_the_answer(name):
    calls = []
    prediction = predict.FACTORIES[name]()
    compute = prediction.answer
    prediction.answer = lambda: calls.append(1) or compute()
    ask, panel = prediction.ask(), prediction.reveal()          # what Run All displays
    assert "Enter a guess first" in panel.status.value
    assert "Answer" not in panel.status.value and not calls     # not even computed
    assert panel.anyway_button.layout.display != "none"
    assert "Enter a guess first" in ask.status.value and "Answer" not in ask.status.value
    panel.reveal_button.click()                                  # Reveal without a guess asks for one
    assert prediction.state == "needs_guess" and not calls
    assert "Enter a guess first" in panel.status.value and "Enter a guess first" in ask.status.value
    assert panel.anyway_button.layout.display != "none"


@pytest.mark.parametrize("name", sorted(predict.FACTORIES))
def test_show_anyway_reveals_without_a_guess(name):
    prediction = predict.FACTORIES[name]()
    panel = prediction.reveal()
    panel.anyway_button.click()
    assert prediction.state == "revealed"
    assert _answer_text(prediction) in panel.status.value
    assert "No guess was made" in panel.status.value
    assert panel.reveal_button.layout.display == "none" and panel.anyway_button.layout.display == "none"


def test_a_guess_then_reveal_compares_in_every_view():
    prediction = predict.board_balance_batch()
    ask, panel = prediction.ask(), prediction.reveal()
    ask.box.value = "1,000"
    assert prediction.state == "guessed" and "1,000" in panel.status.value
    assert "Answer" not in panel.status.value
    panel.reveal_button.click()
    for view in (ask, panel):
        # graded against the nearer of its two answers: the lecture's 300 × sparsity = 2,400
        assert "You guessed 1,000" in view.status.value and "off by 2.4×" in view.status.value
    assert "2,500" in panel.status.value and "2,400" in panel.status.value
    assert "Answer" not in ask.status.value            # the answer is written once, in the panel
    ask.box.value = "2500"                    # editing the box afterwards changes neither state nor verdict
    assert prediction.state == "revealed" and prediction.guess == 1000
    assert "You guessed 1,000" in panel.status.value


def test_an_unreadable_guess_says_why_and_reveals_nothing():
    prediction = predict.two_rack_slowdown()
    panel = prediction.reveal()
    prediction.set_guess("lots")
    assert "Could not read" in panel.status.value and "Answer" not in panel.status.value
    # said to a learner: no API parameter name ("text: ..."), and the forms the box takes (a walk found "text:" odd
    # and "write a plain number" at odds with a prompt that invites "50 kB")
    assert "text:" not in panel.status.value and "2 kB work too" in panel.status.value
    panel.reveal_button.click()
    assert prediction.state == "needs_guess"


def test_the_board_reveal_uses_fixed_constants_not_the_explorer():
    """Ch1 §4: moving every slider of the BatchExplorer before revealing changes nothing."""
    from lecture_lib.explorers.roofline import BatchExplorer

    rack = hardware.get_system("GB200 NVL72")
    expected = rack.flops["fp4"] / 2 * 0.5 / rack.hbm_bandwidth * 8   # ratio x sparsity 8
    prediction = predict.board_balance_batch()
    assert math.isclose(prediction.answer(), expected, rel_tol=1e-12)
    explorer = BatchExplorer()
    for name, value in {"chip": "H100", "n_chips": 8, "weights": "bf16", "kv": "bf16",
                        "len_ctx": explorer.controls["len_ctx"].max, "batch": 7}.items():
        explorer.controls[name].value = value
    prediction.set_guess("2500")
    prediction.press_reveal()
    assert math.isclose(prediction.answer(), expected, rel_tol=1e-12)
    assert "2,500" in prediction.message_html()


def test_the_board_reveal_compares_with_the_bold_line_at_the_explorer_defaults():
    """The "with KV" row is where a fresh BatchExplorer's dashed B* line sits, and it is right of the board's."""
    from lecture_lib.explorers.roofline import BatchExplorer

    explorer = BatchExplorer()
    defaults = explorer.values
    assert defaults["chip"] == "GB200" and defaults["n_chips"] == 72 and defaults["weights"] == "fp4"
    assert defaults["len_ctx"] == predict.BOARD_CONTEXT
    assert defaults["model"].startswith("Board")
    bold_bend = explorer.lines["balance"].get_xdata()[0]
    prediction = predict.board_balance_batch()
    (label, with_kv), = prediction.comparisons
    assert "KV" in label and math.isclose(with_kv(), bold_bend, rel_tol=1e-9)
    assert with_kv() > prediction.answer()
    prediction.press_show_anyway()
    assert predict._fmt(with_kv()) in prediction.message_html()


def test_the_repr_never_shows_the_answer():
    prediction = predict.overtraining()
    prediction.press_show_anyway()
    assert _answer_text(prediction) not in repr(prediction)


def test_verdict_words():
    assert "spot on (within 10%)" in predict.verdict(100, 110)
    assert "close (within 20%)" in predict.verdict(2000, 1667)      # a learner read "spot on" for 20% off as praise too high
    assert "ballpark" in predict.verdict(100, 200)
    assert "off by 100×" in predict.verdict(1, 100)
    assert "No guess" in predict.verdict(None, 5)


@pytest.mark.parametrize("name", sorted(predict.FACTORIES))
def test_the_question_and_its_panel_show_one_reveal_button_and_one_paragraph(name):
    """Issue 31 §5: in Voila (the projector) an ask() cell and a reveal() cell showed two Reveal buttons and
    the same paragraph twice; the guess box's label was cut to "your g…"."""
    import ipywidgets as widgets

    prediction = predict.FACTORIES[name]()
    ask, panel = prediction.ask(), prediction.reveal()

    def buttons(view):
        found, stack = [], [view]
        while stack:
            widget = stack.pop()
            if isinstance(widget, widgets.Button) and widget.layout.display != "none":
                found.append(widget.description)
            stack += list(getattr(widget, "children", ()))
        return found

    for state in ("waiting", "guessed", "needs_guess", "revealed"):
        if state == "guessed":
            prediction.set_guess("1")
        elif state == "needs_guess":
            prediction.set_guess("")
            prediction.press_reveal()
        elif state == "revealed":
            prediction.set_guess("1")
            prediction.press_reveal()
        assert buttons(ask) == [] and buttons(panel).count("Reveal") <= 1, state
        assert ask.status.value != panel.status.value, state
    assert ask.box.style.description_width == "initial" and ask.box.description == "your guess"


def test_a_guess_box_can_be_labelled_when_a_chapter_asks_two_questions():
    """A learner found Ch3's two guess boxes identical; each now names its question."""
    prediction = predict.FACTORIES["decode_idle"]()
    assert prediction.ask().box.description == "your guess"
    assert prediction.ask("your guess, question 1").box.description == "your guess, question 1"


def test_a_share_guessed_above_one_is_told_it_is_a_fraction_before_and_after_the_reveal():
    """A learner typed "4" for the idle fraction (meaning a percentage, or a quarter) and was told only "off by 5×":
    before the reveal the saved-guess line says the answer is a fraction and how to type a percentage; the verdict
    says it too. A guess in range, or a question whose answer is not a share, gets no such line."""
    idle = predict.decode_idle()
    idle.set_guess("4")
    assert "fraction between 0 and 1" in idle.ask_message_html() and "type 4%" in idle.message_html()
    idle.press_reveal()
    assert "fraction between 0 and 1" in idle.message_html() and "off by 5×" in idle.message_html()
    fine = predict.decode_idle()
    fine.set_guess("40%")
    assert "fraction" not in fine.ask_message_html()
    factor = predict.kv_shrink_factor()
    factor.set_guess("4")
    assert "fraction" not in factor.ask_message_html()
    assert "fraction" not in predict.verdict(400, 0.75) and "fraction" not in predict.verdict(4, 40)


def test_the_crossing_depth_is_the_library_formula_at_the_scaling_book_c_act():
    """Ch7's new question: checkpointing at its best segment and reversible layers hold the same activations at
    L = (c + 2)² / 4c, 6.05 layers at c = 20 (whatever the width, the sequence and the format)."""
    import sympy as sp

    from lecture_lib import reversible as rv
    from lecture_lib.symbols import act_values

    assert sp.simplify(rv.CROSSING_DEPTH.rhs - (act_values + 2) ** 2 / (4 * act_values)) == 0
    assert predict.crossing_depth().answer() == pytest.approx(6.05)
    for depth in (5, 7):      # the explorer's two curves change order there
        kept = {s: rv.activation_memory(strategy=s, n_layers=depth, d_model=8192, len_seq=8192)
                for s in ("checkpoint", "reversible")}
        assert (kept["checkpoint"] < kept["reversible"]) == (depth < 6.05)


def test_a_share_answer_is_also_written_as_the_percentage_the_explorers_print():
    """A walk found the bubble written "0.429" in the reveal and "42.9%" in the simulator and the explorer."""
    bubble = predict.training_bubble()
    bubble.press_show_anyway()
    assert "<b>0.429 (42.9%)</b>" in bubble.message_html()
    factor = predict.kv_shrink_factor()
    factor.press_show_anyway()
    assert "%" not in factor.message_html().split("Answer")[1].split("</b>")[0]


def test_a_percentage_for_a_question_that_is_not_a_share_is_read_as_a_fraction_and_says_so():
    """A learner's walk typed 40% for Chapter 6's bytes per token and was told only "0.4 bytes per token"."""
    prediction = predict.FACTORIES["kv_bytes_at_price_step"]()
    prediction.set_guess("40%")
    assert prediction.guess == 0.4
    for shown in (prediction.message_html(), prediction.ask_message_html()):
        assert "reads as a fraction" in shown and "type it without the % sign" in shown
    prediction.set_guess("40")
    assert "reads as a fraction" not in prediction.message_html()
    share = predict.FACTORIES["batch1_share"]()
    share.set_guess("40%")
    assert share.guess == 0.4 and "reads as a fraction" not in share.message_html()
