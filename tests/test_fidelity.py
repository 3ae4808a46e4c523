"""The fidelity fixes of issue 13: each would have been caught by one of these checks."""

import re
from pathlib import Path

import nbformat

from lecture_lib import hardware, pipeline, roofline, scaling
from lecture_lib.formula import same

ROOT = Path(__file__).resolve().parents[1]
BOX = "On the board vs. in reality"


def cells(name):
    return nbformat.read(ROOT / "notebooks" / name, as_version=4).cells


def markdown(name) -> str:
    return "\n".join(c.source for c in cells(name) if c.cell_type == "markdown")


CH1, CH3, CH4 = "01_batch_size_cost_and_speed.ipynb", "03_pipeline_parallelism.ipynb", "04_pipelining_is_not_wise.ipynb"
CH5, CH6, CH7 = ("05_rl_overtraining_beyond_chinchilla.ipynb", "06_long_context_from_api_pricing.ipynb",
                 "07_neural_nets_and_cryptography.ipynb")


def test_ch1_gemini_share_matches_the_printed_ratio():
    """§10 said 'a few thousandths' while its cell printed 1/3,918; the text now reconciles the lecture's range."""
    text = markdown(CH1)
    assert "few thousandths" not in text
    unit = roofline.THROUGHPUT(B=2000, t_step=1 / 64)
    share = (1.3e15 / (30 * 24 * 3600)) / unit
    assert f"1/{round(share, -2):,.0f}" in text                 # "about 1/3,900"
    assert "hundreds of millions" in text and "one-thousandth" in text
    box = next(c.source for c in cells(CH1) if c.get("id") == "gemini-share-box")
    assert BOX in box


def test_ch1_ratio_claim_is_checked_against_the_table():
    """§6 claimed the ratio 'has stayed ≈300 from A100 to Blackwell' above a table showing 153 and 469."""
    text = markdown(CH1)
    assert "it has stayed there from A100 to Blackwell" not in text
    box = next(c.source for c in cells(CH1) if c.get("id") == "ratio-spread-box")
    assert BOX in box
    bytes_of = hardware.BYTES_PER_VALUE
    for name, fmt in [("A100", "bf16"), ("GB300", "fp8"), ("GB300", "fp4")]:
        value = roofline.hardware_ratio(hardware.get(name), fmt, bytes_of[fmt])
        assert f"{value:.0f}" in box or f"{round(value, -1):.0f}" in box, (name, fmt, value)


def test_ch1_step_length_says_what_goes_wrong_both_ways():
    text = next(c.source for c in cells(CH1) if c.get("id") == "step-length-text")
    assert "A longer step" in text and "A shorter step" in text and "00:24:30" in text
    assert any(c.get("id") == "step-length" and "WORST_CASE_LATENCY" in c.source for c in cells(CH1))


def test_ch4_attributes_what_is_not_in_the_transcript():
    text = markdown(CH4)
    assert "most weight" not in text
    for phrase in ("greatest sin", "sliding-window"):
        for cell in cells(CH4):
            if cell.cell_type == "markdown" and phrase in cell.source:
                assert "flashcard" in cell.source and "not" in cell.source, phrase
    assert "Attribution" in text


def test_ch4_links_chapter_3_to_its_notebook():
    question = next(c.source for c in cells(CH4) if c.get("id") == "cell-01")
    assert "[Chapter 3](03_pipeline_parallelism.ipynb)" in question
    assert not re.search(r"\[Chapter 3\]\(https://", markdown(CH4))


def test_1f1b_cites_pipedream_flush():
    text = markdown(CH3)
    assert re.search(r"1F1B\*\* \(PipeDream-Flush[^)]*arXiv:2006\.09503", text.replace("\n", " "))
    assert "2006.09503" in pipeline.BUBBLE_FRACTION.source


def test_ch5_total_cost_comes_before_the_equal_split():
    assert same(scaling.COST_TOTAL.rhs, scaling.COST_PRETRAIN.rhs + scaling.COST_RL.rhs + scaling.COST_INFERENCE.rhs)
    order = [c.get("id") for c in cells(CH5)]
    total = next(i for i, c in enumerate(cells(CH5)) if "scaling.COST_TOTAL" in c.source)
    split = next(i for i, c in enumerate(cells(CH5)) if "a good ballpark is a 33% split" in c.source)
    assert total < split, order
    text = markdown(CH5)
    assert "smaller model" in text and "more tokens" in text.lower()


def test_ch6_gpt3_context_is_2k():
    for cell in cells(CH6):
        if cell.cell_type == "markdown" and "GPT-3" in cell.source:
            assert "8K (GPT-3" not in cell.source or BOX in cell.source
    text = markdown(CH6)
    assert "2,048 tokens" in text and "2005.14165" in text


def test_ch7_answers_the_coincidence_question():
    text = markdown(CH7)
    answer = text[text.index("So, coincidence?"):][:900]
    assert "every output to depend on every input" in answer and "opposite" in answer
