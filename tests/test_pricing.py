"""Tests for lecture_lib.pricing: published prices as golden numbers, ratios, lookups, bad input.

Each golden number names the page it was read from (the sheet's ``source``) and what the page
says; a change to a sheet that breaks one of these is a change to the published record.
"""

import dataclasses
import datetime
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lecture_lib import pricing

REQUIRED = ["claude-opus-4.6", "gemini-3.1-pro"]


def sheet_kwargs(**changes):
    base = dict(key="test", provider="Test", model="Test model", as_of="2026-01-01",
                source="https://example.com/pricing", input=1.0, output=4.0)
    base.update(changes)
    return base


# --- Every sheet is dated and sourced ----------------------------------------------------

@pytest.mark.parametrize("key", pricing.names())
def test_every_sheet_has_an_iso_date_a_url_and_notes(key):
    sheet = pricing.get(key)
    date = datetime.date.fromisoformat(sheet.as_of)
    assert datetime.date(2025, 1, 1) <= date <= datetime.date(2026, 12, 31)
    assert sheet.source.startswith("https://")
    assert len(sheet.notes) > 80, "notes must say how the numbers were verified"


@pytest.mark.parametrize("key", pricing.names())
def test_every_price_is_positive_finite_and_ordered_sensibly(key):
    sheet = pricing.get(key)
    for kind, price in sheet.prices().items():
        assert math.isfinite(price) and price > 0, kind
    assert sheet.output > sheet.input  # output costs more everywhere (decode is memory-bound)
    if sheet.cache_read is not None:
        assert sheet.cache_read < sheet.input  # a hit is cheaper than recomputing
    if sheet.long_context_step is not None:
        assert min(sheet.long_context_step) > 1  # the long tier costs more, never less


def test_required_sheets_and_providers_present():
    for key in REQUIRED:
        assert key in pricing.SHEETS
    assert {s.provider for s in pricing.SHEETS.values()} >= {"Anthropic", "Google", "OpenAI",
                                                             "DeepSeek"}


# --- Golden prices and ratios ----------------------------------------------------------------

def test_opus_46_prices_anthropic_pricing_page():
    # platform.claude.com/docs/en/about-claude/pricing, Opus 4.6 row:
    # $5 base input, $6.25 5m write, $10 1h write, $0.50 hit, $25 output (lecture 02:00:05-02:00:18)
    opus = pricing.get("claude-opus-4.6")
    assert (opus.input, opus.cache_write_5m, opus.cache_write_1h, opus.cache_read, opus.output) \
        == (5.0, 6.25, 10.0, 0.50, 25.0)
    assert opus.long_context_threshold is None  # flat across 1M since 2026-03-13


def test_opus_cache_multipliers_anthropic_prompt_caching_table():
    # Pricing page "Prompt caching": 5-minute write 1.25x, 1-hour write 2x, hit 0.1x base input.
    opus = pricing.get("claude-opus-4.6")
    assert opus.cache_write_5m / opus.input == pytest.approx(1.25)
    assert opus.cache_write_1h / opus.input == pytest.approx(2.0)
    assert opus.cache_read / opus.input == pytest.approx(0.1)
    assert opus.cache_read_discount == pytest.approx(10.0)  # "cache hits like 10x cheaper" 01:48:14


def test_opus_fast_mode_is_6x_anthropic_fast_mode_docs():
    # Pricing page "Fast mode pricing": $30 / $150 per MTok, "6x standard rates"; Chapter 1 cites it.
    opus = pricing.get("claude-opus-4.6")
    assert (opus.fast_input, opus.fast_output) == (30.0, 150.0)
    assert opus.fast_multiplier == pytest.approx((6.0, 6.0))


def test_opus_output_is_5x_input_lecture_01_41_23():
    assert pricing.get("claude-opus-4.6").output_to_input == pytest.approx(5.0)


def test_gemini_31_pro_tiers_google_pricing_page():
    # ai.google.dev/gemini-api/docs/pricing: input $2.00 (<=200k) / $4.00 (>200k);
    # output $12.00 / $18.00; caching $0.20 / $0.40 plus $4.50 per 1M tokens per hour.
    gemini = pricing.get("gemini-3.1-pro")
    assert (gemini.input, gemini.long_input, gemini.output, gemini.long_output) == (2, 4, 12, 18)
    assert gemini.long_context_threshold == 200_000
    assert gemini.cache_read == 0.20 and gemini.cache_storage_per_mtok_hour == 4.50


def test_gemini_step_output_is_the_lectures_plus_50_percent_input_doubles():
    # Lecture 01:33:24 "+50% above 200K" = the output ratio 18/12; the input ratio is 4/2 = 2
    # (lecture notes, Chapter 6 errata).
    input_step, output_step = pricing.get("gemini-3.1-pro").long_context_step
    assert input_step == pytest.approx(2.0)
    assert output_step == pytest.approx(1.5)


def test_gemini_long_tier_cache_read_is_the_published_040():
    # $0.40 per MTok "prompts > 200k": the cache price scales with the input step.
    gemini = pricing.get("gemini-3.1-pro")
    assert gemini.price_per_token("cache_read", prompt_tokens=300_000) * 1e6 == pytest.approx(0.40)


def test_gemini_storage_per_token_second():
    # $4.50 / 1e6 tokens / 3600 s
    assert pricing.get("gemini-3.1-pro").cache_storage_per_token_second == \
        pytest.approx(4.50 / 1e6 / 3600)


def test_opus_beta_and_sonnet_45_have_anthropics_200k_step():
    # Pricing page "Long context pricing" (Feb-Mar 2026): Opus 4.6 $5/$25 -> $10/$37.50,
    # Sonnet 4.x $3/$15 -> $6/$22.50 above 200K input tokens.
    beta = pricing.get("claude-opus-4.6-1m-beta")
    assert (beta.long_input, beta.long_output, beta.long_context_threshold) == (10, 37.5, 200_000)
    sonnet = pricing.get("claude-sonnet-4.5")
    assert (sonnet.input, sonnet.long_input, sonnet.output, sonnet.long_output) == (3, 6, 15, 22.5)
    for sheet in (beta, sonnet):
        assert sheet.long_context_step == pytest.approx((2.0, 1.5))


def test_gpt_54_prices_openai_pricing_page():
    # developers.openai.com/api/docs/pricing: <272K $2.50 / $0.25 cached / $15;
    # >272K $5 / $0.50 / $22.50 ("2x input and 1.5x output for the full session").
    gpt = pricing.get("gpt-5.4")
    assert (gpt.input, gpt.cache_read, gpt.output) == (2.5, 0.25, 15)
    assert gpt.long_context_threshold == 272_000
    assert gpt.long_context_step == pytest.approx((2.0, 1.5))
    assert gpt.price_per_token("cache_read", prompt_tokens=300_000) * 1e6 == pytest.approx(0.50)


def test_deepseek_v32_cache_hit_is_a_tenth_of_a_miss():
    # api-docs.deepseek.com pricing (V3.2): miss $0.28, hit $0.028, output $0.42.
    deepseek = pricing.get("deepseek-v3.2")
    assert (deepseek.input, deepseek.cache_read, deepseek.output) == (0.28, 0.028, 0.42)
    assert deepseek.cache_read_discount == pytest.approx(10.0)
    assert deepseek.output_to_input == pytest.approx(1.5)


# --- price_per_token ---------------------------------------------------------------------------

def test_price_per_token_converts_per_mtok_and_steps_strictly_above_threshold():
    gemini = pricing.get("gemini-3.1-pro")
    assert gemini.price_per_token("input") == pytest.approx(2e-6)
    assert gemini.price_per_token("input", prompt_tokens=200_000) == pytest.approx(2e-6)
    assert gemini.price_per_token("input", prompt_tokens=200_001) == pytest.approx(4e-6)
    assert gemini.price_per_token("output", prompt_tokens=1_000_000) == pytest.approx(18e-6)


def test_price_per_token_broadcasts_over_arrays():
    gemini = pricing.get("gemini-3.1-pro")
    tokens = np.array([0, 100_000, 200_000, 250_000, 1_000_000])
    prices = gemini.price_per_token("output", prompt_tokens=tokens)
    assert prices.shape == tokens.shape
    np.testing.assert_allclose(prices * 1e6, [12, 12, 12, 18, 18])
    flat = pricing.get("claude-opus-4.6").price_per_token("input", prompt_tokens=tokens)
    np.testing.assert_allclose(flat * 1e6, 5.0)


def test_cache_writes_scale_with_the_input_step_fast_mode_does_not():
    # Anthropic: "prompt caching multipliers apply on top of long context pricing";
    # "Fast mode includes the full 1M context window at no additional long context charge".
    beta = pricing.get("claude-opus-4.6-1m-beta")
    assert beta.price_per_token("cache_write_5m", prompt_tokens=500_000) * 1e6 == \
        pytest.approx(12.5)
    assert beta.price_per_token("fast_output", prompt_tokens=500_000) * 1e6 == pytest.approx(150)


@settings(max_examples=50, deadline=None)
@given(key=st.sampled_from(pricing.names()), tokens=st.integers(0, 2_000_000))
def test_price_per_token_never_decreases_with_prompt_length(key, tokens):
    sheet = pricing.get(key)
    for kind in sheet.prices():
        assert sheet.price_per_token(kind, prompt_tokens=tokens + 1) >= \
            sheet.price_per_token(kind, prompt_tokens=tokens)


# --- Lookup -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, key", [
    ("Claude Opus 4.6", "claude-opus-4.6"),
    ("claude-opus-4-6", "claude-opus-4.6"),  # Anthropic's API model id
    ("OPUS 4.6", "claude-opus-4.6"),
    ("Gemini 3.1 Pro", "gemini-3.1-pro"),
    ("gemini-3.1-pro-preview", "gemini-3.1-pro"),
    ("gpt_5_4", "gpt-5.4"),
    ("GPT-5.4", "gpt-5.4"),
    ("DeepSeek V3.2", "deepseek-v3.2"),
    ("sonnet 4.5", "claude-sonnet-4.5"),
    ("opus 4.6 1M beta", "claude-opus-4.6-1m-beta"),
])
def test_loose_names(name, key):
    assert pricing.get(name) is pricing.SHEETS[key]


def test_unknown_name_raises_key_error_listing_names():
    with pytest.raises(KeyError, match="gemini-3.1-pro"):
        pricing.get("gemini 9")


def test_non_string_name_is_a_value_error():
    with pytest.raises(ValueError, match="key"):
        pricing.get(42)


def test_sheets_are_read_only():
    with pytest.raises(TypeError):
        pricing.SHEETS["x"] = pricing.get("gpt-5.4")
    with pytest.raises(dataclasses.FrozenInstanceError):
        pricing.get("gpt-5.4").input = 1.0


# --- Bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("field, value", [
    ("input", -5.0), ("output", float("nan")), ("input", 0.0), ("output", float("inf")),
    ("cache_read", -0.5), ("cache_write_5m", float("nan")), ("input", True), ("output", "25"),
])
def test_bad_prices_name_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        pricing.PriceSheet(**sheet_kwargs(**{field: value}))


@pytest.mark.parametrize("as_of", ["", None, "2026-13-01", "29/11/2026", "2026-11"])
def test_missing_or_bad_date(as_of):
    with pytest.raises(ValueError, match="as_of"):
        pricing.PriceSheet(**sheet_kwargs(as_of=as_of))


@pytest.mark.parametrize("source", ["", None, "the pricing page", "ftp://x"])
def test_missing_or_bad_source(source):
    with pytest.raises(ValueError, match="source"):
        pricing.PriceSheet(**sheet_kwargs(source=source))


def test_long_tier_without_threshold():
    with pytest.raises(ValueError, match="long_context_threshold"):
        pricing.PriceSheet(**sheet_kwargs(long_input=2.0, long_output=6.0))


def test_threshold_without_both_long_prices():
    with pytest.raises(ValueError, match="long_output"):
        pricing.PriceSheet(**sheet_kwargs(long_context_threshold=200_000, long_input=2.0))


@pytest.mark.parametrize("threshold", [0, -1, 2.5e5 + 0.5, True])
def test_bad_threshold(threshold):
    with pytest.raises(ValueError, match="long_context_threshold"):
        pricing.PriceSheet(**sheet_kwargs(long_context_threshold=threshold, long_input=2.0,
                                          long_output=6.0))


def test_fast_prices_come_in_pairs():
    with pytest.raises(ValueError, match="fast_output"):
        pricing.PriceSheet(**sheet_kwargs(fast_input=6.0))


def test_empty_key():
    with pytest.raises(ValueError, match="key"):
        pricing.PriceSheet(**sheet_kwargs(key=" "))


def test_price_per_token_bad_kind_and_missing_price():
    with pytest.raises(ValueError, match="kind"):
        pricing.get("gpt-5.4").price_per_token("thinking")
    with pytest.raises(ValueError, match="cache_write_5m"):
        pricing.get("gpt-5.4").price_per_token("cache_write_5m")


@pytest.mark.parametrize("tokens", [-1, float("nan"), "200k", [1, -2]])
def test_price_per_token_bad_prompt_tokens(tokens):
    with pytest.raises(ValueError, match="prompt_tokens"):
        pricing.get("gemini-3.1-pro").price_per_token("input", prompt_tokens=tokens)


def test_cache_durations_are_five_minutes_and_one_hour():
    # Lecture 01:59:37: "5 minutes versus 1 hour"
    assert pricing.CACHE_DURATIONS == {"cache_write_5m": 300.0, "cache_write_1h": 3600.0}


# --- request_cost -------------------------------------------------------------------------------

def test_request_cost_opus_by_hand():
    # 100K uncached input at $5, 2K output at $25, 50K cache hits at $0.50, 10K 1h writes at $10.
    opus = pricing.get("claude-opus-4.6")
    cost = opus.request_cost(input_tokens=100_000, output_tokens=2_000, cache_read_tokens=50_000,
                             cache_write_tokens=10_000, cache_ttl="1h")
    assert cost == pytest.approx((100_000 * 5 + 2_000 * 25 + 50_000 * 0.5 + 10_000 * 10) / 1e6)


def test_request_cost_whole_request_moves_to_the_long_tier():
    # Gemini: a 250K-token prompt is billed entirely at $4 / $18, not just the tokens past 200K.
    gemini = pricing.get("gemini-3.1-pro")
    assert gemini.request_cost(input_tokens=250_000, output_tokens=1_000) == \
        pytest.approx((250_000 * 4 + 1_000 * 18) / 1e6)
    # cache hits count toward the threshold: 150K fresh + 100K cached crosses it too
    assert gemini.request_cost(input_tokens=150_000, cache_read_tokens=100_000) == \
        pytest.approx((150_000 * 4 + 100_000 * 0.40) / 1e6)


def test_request_cost_fast_mode_is_six_times_and_stacks_with_caching():
    opus = pricing.get("claude-opus-4.6")
    normal = opus.request_cost(input_tokens=10_000, output_tokens=1_000, cache_read_tokens=5_000)
    fast = opus.request_cost(input_tokens=10_000, output_tokens=1_000, cache_read_tokens=5_000,
                             fast=True)
    assert fast == pytest.approx(6 * normal)


def test_request_cost_broadcasts():
    gpt = pricing.get("gpt-5.4")
    costs = gpt.request_cost(input_tokens=np.array([1e5, 3e5]), output_tokens=1e3)
    np.testing.assert_allclose(costs, [(1e5 * 2.5 + 1e3 * 15) / 1e6, (3e5 * 5 + 1e3 * 22.5) / 1e6])


def test_request_cost_bad_input():
    with pytest.raises(ValueError, match="input_tokens"):
        pricing.get("gpt-5.4").request_cost(input_tokens=-1)
    with pytest.raises(ValueError, match="cache_write_tokens"):
        pricing.get("gpt-5.4").request_cost(input_tokens=1, cache_write_tokens=10)
    with pytest.raises(ValueError, match="fast"):
        pricing.get("gemini-3.1-pro").request_cost(input_tokens=1, fast=True)
    with pytest.raises(ValueError, match="cache_ttl"):
        pricing.get("claude-opus-4.6").request_cost(input_tokens=1, cache_ttl="10m")
