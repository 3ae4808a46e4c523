"""Formatting at the edge and the shared input checks."""

import math
import re

import numpy as np
import pytest

from lecture_lib import units, validate
from lecture_lib.catalogue import Catalogue


@pytest.mark.parametrize("value, text", [(37e9, "37 B params"), (671e9, "671 B params"), (1.04e12, "1.04 T params"),
                                         (1e15, "1 × 10¹⁵ params"), (9.9996e14, "1 × 10¹⁵ params"), (9.9e14, "990 T params")])
def test_count(value, text):
    assert units.count(value, "params") == text


def test_bandwidth_bytes_seconds():
    assert units.bandwidth(8e12) == "8 TB/s"
    assert units.bytes_(288e9) == "288 GB"
    assert units.seconds(0.0144) == "14.4 ms"
    assert units.seconds(2.5e-4) == "250 µs"
    assert units.flops(989e12) == "989 TFLOP/s"
    assert units.rate(128e3) == "128 k tokens/s"


@pytest.mark.parametrize("bad", [0, -3, math.nan, -math.inf, "12", b"1", None, False, object()])
def test_number_refuses_bad_values_naming_them(bad):
    with pytest.raises(ValueError, match="batch"):
        validate.number("batch", bad)


def test_number_accepts_arrays_and_allows_zero_when_asked():
    assert validate.number("x", 0, allow_zero=True) == 0.0
    assert np.allclose(validate.number("x", [1, 2]), [1, 2])
    with pytest.raises(ValueError, match="<= 1"):
        validate.fraction("mfu", 1.5)


def test_integer_and_choice():
    assert validate.integer("n", 4.0) == 4
    with pytest.raises(ValueError, match="n_layers"):
        validate.integer("n_layers", 2.5)
    with pytest.raises(ValueError, match="one of"):
        validate.choice("fmt", "fp16", ["bf16", "fp8"])


@pytest.mark.parametrize("value, text", [(4e-5, "$0.00004"), (4.567e-5, "$0.000046"), (6.26e-4, "$0.00063"), (1.2e-9, "$1.2 × 10⁻⁹"),
                                         (0.33, "$0.33"), (0, "$0"), (1.2, "$1.20"), (3.5, "$3.50"),
                                         (5, "$5.00"), (0.5, "$0.50"), (0.0307, "$0.0307"), (12.25, "$12.25"),
                                         (99.999, "$100"), (250, "$250")])
def test_money_has_its_cents_and_a_fraction_of_a_cent_two_digits(value, text):
    assert units.dollars(value) == text


def test_catalogue_finds_loose_spellings_and_aliases_and_refuses_clashes():
    catalogue = Catalogue("widget", {"Big One": 1, "tpu-v5e": 2}, {"Ironwood": "Big One"})
    assert catalogue.find("big_one") == catalogue.find("IRONWOOD") == 1
    assert catalogue.find("TPU v5e") == catalogue.find("tpu.v5e") == 2
    assert catalogue.names() == ["Big One", "tpu-v5e"]
    with pytest.raises(KeyError, match="known widgets: Big One, tpu-v5e"):
        catalogue.find("small one")
    with pytest.raises(ValueError, match="name must be a string naming a widget"):
        catalogue.find(7)
    with pytest.raises(ValueError, match="clashes"):
        Catalogue("widget", {"a-b": 1, "ab": 2})
    with pytest.raises(ValueError, match="unknown"):
        Catalogue("widget", {"a": 1}, {"b": "c"})


@pytest.mark.parametrize("text, plain", [("5×10¹⁵", "5e15"), ("5x10^15", "5e15"), ("3*10**-9", "3e-9"),
                                         ("3×10⁻⁹", "3e-9"), ("2k", "2k"), ("abc", "abc")])
def test_a_power_of_ten_written_as_prose_reads_back(text, plain):
    assert units.e_notation(text) == plain
    if plain != text:
        assert float(plain) == float(units.e_notation(units.power_of_ten(float(plain)).replace(" ", "")))


@pytest.mark.parametrize("share, shown", [(0.43, "43%"), (0.1, "10%"), (0.045, "4.5%"), (0.0012, "0.12%"),
                                          (0.0, "0%"), (1.0, "100%"), (-0.03, "-3%")])
def test_a_small_share_is_a_percentage_never_rounded_to_zero(share, shown):
    """Chapter 1's "MFU at your B" read "0%" at B = 1 (a learner's walk): below 10% two significant digits."""
    assert units.percent(share) == shown


def test_mfu_at_batch_one_is_not_shown_as_zero():
    from lecture_lib.explorers.roofline import BatchExplorer

    explorer = BatchExplorer()
    explorer.controls["batch"].value = 1
    row = re.search(r"MFU at your B</td><td[^>]*><b>([^<]*)</b>", explorer.readout.value).group(1)
    assert row != "0%" and row.endswith("%") and float(row.rstrip("%")) > 0, row
