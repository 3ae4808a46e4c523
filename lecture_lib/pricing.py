"""Published API price sheets, with their dates and sources (Chapter 6, lecture 01:33:02-02:04:02).

Reiner's argument in Chapter 6 reads a provider's costs out of its prices: "you are incentivized to
price close to your costs because otherwise someone could scoop you" (lecture 01:40:54). This
module holds the price sheets the argument starts from::

    from lecture_lib import pricing
    gemini = pricing.get("Gemini 3.1 Pro")
    gemini.long_context_step          # (2.0, 1.5): input doubles, output +50% above 200K
    pricing.get("opus 4.6").cache_read_discount   # 10.0: a cache hit costs 1/10 of an input token

Conventions
-----------
- Every price is **USD per million tokens** ("$/MTok"), as the vendors print it, except
  ``cache_storage_per_mtok_hour`` (USD per million cached tokens per hour, Gemini's storage fee).
  :meth:`PriceSheet.price_per_token` converts to USD per token.
- ``as_of`` is the ISO date the figures were published (or, where no publication date is known,
  the date the copy we read was captured); ``source`` is the vendor's own page. ``notes`` says how
  each number was verified, what changed since, and anything we could not verify.
- A sheet with a **long-context tier** charges *every* token of a request at the long rates once
  the prompt exceeds ``long_context_threshold`` input tokens (cache reads and writes count toward
  the prompt). All three vendors here bill the whole request, not just the tokens past the step.
- Standard (paid, on-demand, global) rates only: no batch discounts (50 % everywhere here), no
  regional/data-residency uplifts, no free tiers.

Sheets
------
``claude-opus-4.6``          Anthropic, flat 1M window (from 2026-03-13), fast mode 6x.
``claude-opus-4.6-1m-beta``  the same model during its 1M-context beta, with a 200K tier (2x/1.5x).
``claude-sonnet-4.5``        Anthropic, 200K tier 2x input / 1.5x output.
``gemini-3.1-pro``           Google, 200K tier 2x input / 1.5x output, cache storage per hour.
``gpt-5.4``                  OpenAI, 272K tier 2x input / 1.5x output, cached input 0.1x.
``deepseek-v3.2``            DeepSeek, 128K window, cache hit 0.1x of a miss.

The lecture's "+50% above 200K" for Gemini 3.1 (lecture 01:33:24) is the *output* step; the input
price doubles (lecture notes, Chapter 6 errata).
"""

from __future__ import annotations

import dataclasses
import datetime
import re
from collections.abc import Mapping
from types import MappingProxyType

import numpy as np

from . import validate
from .catalogue import Catalogue

__all__ = [
    "CACHE_DURATIONS",
    "KINDS",
    "SHEETS",
    "PriceSheet",
    "get",
    "names",
]

PER_MTOK = 1e6
"""Tokens per "MTok", the unit every price sheet uses."""

KINDS = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read",
         "fast_input", "fast_output")
"""Token kinds :meth:`PriceSheet.price_per_token` accepts; each is a field of the sheet."""

CACHE_DURATIONS: Mapping[str, float] = MappingProxyType(
    {"cache_write_5m": 5 * 60.0, "cache_write_1h": 60 * 60.0})
"""Seconds a cache write keeps its prefix, for the two Anthropic write prices (lecture 01:59:37:
"5 minutes versus 1 hour"). A hit refreshes the timer (Anthropic prompt-caching docs)."""

_CACHE_KINDS = ("cache_write_5m", "cache_write_1h", "cache_read")
_FAST_KINDS = ("fast_input", "fast_output")
_OPTIONAL_PRICES = ("long_input", "long_output", "cache_write_5m", "cache_write_1h", "cache_read",
                    "cache_storage_per_mtok_hour", "fast_input", "fast_output")


@dataclasses.dataclass(frozen=True, kw_only=True)
class PriceSheet:
    """One model's published token prices (USD per million tokens) with their date and source.

    ``input``/``output`` are the base rates (prompt at most ``long_context_threshold`` tokens);
    ``long_input``/``long_output`` the rates once the prompt exceeds it. ``cache_write_5m`` and
    ``cache_write_1h`` are what writing a prefix into the cache costs per token, ``cache_read``
    what a cache hit costs; ``cache_storage_per_mtok_hour`` is a per-hour holding fee (Gemini).
    ``fast_input``/``fast_output`` are a premium-speed mode's rates (Anthropic fast mode).
    ``None`` means the sheet publishes no such price.
    """

    key: str
    provider: str
    model: str
    as_of: str
    source: str
    input: float
    output: float
    long_context_threshold: int | None = None
    long_input: float | None = None
    long_output: float | None = None
    cache_write_5m: float | None = None
    cache_write_1h: float | None = None
    cache_read: float | None = None
    cache_storage_per_mtok_hour: float | None = None
    fast_input: float | None = None
    fast_output: float | None = None
    notes: str = dataclasses.field(default="", repr=False)

    def __post_init__(self):
        for field in ("key", "provider", "model"):
            value = getattr(self, field)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"PriceSheet: {field} must be a non-empty string, got {value!r}")
        owner = f"PriceSheet {self.key!r}"
        _check_date(owner, self.as_of)
        if not isinstance(self.source, str) or not re.match(r"https?://\S+$", self.source.strip()):
            raise ValueError(f"{owner}: source must be the URL the prices were read from, "
                             f"got {self.source!r}")
        # Keep the validated float, not the value passed: a Decimal, a Fraction or a NumPy scalar
        # would otherwise reach the arithmetic below (Decimal / float raises TypeError, np.float16
        # overflows), and a list would pass as an array of prices.
        for field in ("input", "output") + _OPTIONAL_PRICES:
            value = getattr(self, field)
            if value is not None or field in ("input", "output"):
                object.__setattr__(self, field, validate.scalar(f"{owner}: {field}", value))
        has_long = (self.long_input is not None, self.long_output is not None)
        if self.long_context_threshold is None:
            if any(has_long):
                raise ValueError(f"{owner}: long_input/long_output need a long_context_threshold "
                                 "(the prompt length, in tokens, where the long tier starts)")
        else:
            object.__setattr__(self, "long_context_threshold",
                               validate.integer(f"{owner}: long_context_threshold", self.long_context_threshold))
            if not all(has_long):
                raise ValueError(f"{owner}: long_context_threshold needs both long_input and "
                                 f"long_output, got {self.long_input!r} and {self.long_output!r}")
        if (self.fast_input is None) != (self.fast_output is None):
            raise ValueError(f"{owner}: fast_input and fast_output come together, got "
                             f"{self.fast_input!r} and {self.fast_output!r}")
        self._check_ratios(owner)

    def _check_ratios(self, owner: str) -> None:
        """Every ratio and conversion a caller reads must be finite: two valid prices can still divide
        to inf (input 1e-300 against output 1e10, or 1e308 over a cache price of 0.5)."""
        pairs = [("output", "input"), ("input", "cache_read"), ("long_input", "input"),
                 ("long_output", "output"), ("fast_input", "input"), ("fast_output", "output")]
        with np.errstate(all="ignore"):
            for top, bottom in pairs:
                a, b = getattr(self, top), getattr(self, bottom)
                if a is not None and b is not None and not np.isfinite(np.float64(a) / np.float64(b)):
                    raise ValueError(f"{owner}: {top}={a!r} and {bottom}={b!r} differ too much in size "
                                     f"({top}/{bottom} overflows): use prices of ordinary size")
            step = None if self.long_input is None else np.float64(self.long_input) / np.float64(self.input)
            for kind in _CACHE_KINDS:   # the long tier scales the cache prices by the input step
                price = getattr(self, kind)
                if step is not None and price is not None and not np.isfinite(price * step):
                    raise ValueError(f"{owner}: {kind}={price!r} times the long-context step long_input/input "
                                     f"= {step:.3g} overflows: use prices of ordinary size")

    # --- ratios the lecture reads off a price sheet ----------------------------------------

    @property
    def output_to_input(self) -> float:
        """Output price / input price (5 for Opus; lecture 01:41:23: "output 3-5x input")."""
        return self.output / self.input

    @property
    def long_context_step(self) -> tuple[float, float] | None:
        """(input ratio, output ratio) across the long-context threshold, or ``None``.

        Gemini 3.1 Pro: (2.0, 1.5). The lecture's "+50%" (01:33:24) is the output ratio.
        """
        if self.long_context_threshold is None:
            return None
        return self.long_input / self.input, self.long_output / self.output

    @property
    def cache_read_discount(self) -> float | None:
        """Input price / cache-hit price: how many times cheaper a hit is (lecture 01:48:14, ≈10)."""
        return None if self.cache_read is None else self.input / self.cache_read

    @property
    def fast_multiplier(self) -> tuple[float, float] | None:
        """(input ratio, output ratio) of fast mode over the base rates: (6, 6) for Opus 4.6."""
        if self.fast_input is None:
            return None
        return self.fast_input / self.input, self.fast_output / self.output

    @property
    def cache_storage_per_token_second(self) -> float | None:
        """Holding cost of one cached token for one second, USD (Gemini's storage fee)."""
        if self.cache_storage_per_mtok_hour is None:
            return None
        return self.cache_storage_per_mtok_hour / PER_MTOK / 3600.0

    def prices(self) -> dict[str, float]:
        """Every published base-tier price, USD per million tokens, keyed by :data:`KINDS`."""
        return {kind: getattr(self, kind) for kind in KINDS if getattr(self, kind) is not None}

    def price_per_token(self, kind: str = "input", *, prompt_tokens=0):
        """USD per token of ``kind`` for a request whose prompt has ``prompt_tokens`` tokens.

        Above ``long_context_threshold`` the long tier applies: ``long_input``/``long_output`` for
        input and output, and the cache prices scaled by the input step (Anthropic: "prompt
        caching multipliers apply on top of long context pricing"; Gemini 3.1 Pro $0.20 -> $0.40
        and GPT-5.4 $0.25 -> $0.50 per MTok follow the same rule). Fast-mode prices apply across
        the whole window (Anthropic pricing page, 2026). ``prompt_tokens`` may be a NumPy array;
        the result then has its shape.
        """
        validate.choice("kind", kind, KINDS)
        base = getattr(self, kind)
        if base is None:
            available = [k for k in KINDS if getattr(self, k) is not None]
            raise ValueError(f"{self.key} publishes no {kind} price; kind must be one of "
                             f"{available}, got {kind!r}")
        tokens = validate.number("prompt_tokens", prompt_tokens, allow_zero=True)
        if self.long_context_threshold is None or kind in _FAST_KINDS:
            long = base
        elif kind == "input":
            long = self.long_input
        elif kind == "output":
            long = self.long_output
        else:
            long = base * (self.long_input / self.input)   # the ratio first: base * long_input may overflow
        per_mtok = np.where(np.asarray(tokens) > self.long_context_threshold, long, base) \
            if self.long_context_threshold is not None else np.full(np.shape(tokens), base)
        per_token = per_mtok / PER_MTOK
        return float(per_token) if np.ndim(per_token) == 0 else per_token

    def request_cost(self, *, input_tokens, output_tokens=0, cache_read_tokens=0,
                     cache_write_tokens=0, cache_ttl: str = "5m", fast: bool = False):
        """USD for one request: uncached input, output, cache hits and cache writes.

        The prompt is ``input_tokens + cache_read_tokens + cache_write_tokens`` (all count toward
        the long-context threshold, as Anthropic's and Google's pages say), and the tier it falls
        in prices *every* token of the request. ``cache_ttl`` picks the 5-minute or 1-hour write
        price. ``fast=True`` uses the fast-mode rates, with the cache multipliers applied on top
        (Anthropic: "prompt caching multipliers apply on top of fast mode pricing"). Token
        counts may be NumPy arrays (broadcast together).
        """
        tokens = {name: validate.number(name, value, allow_zero=True) for name, value in (
            ("input_tokens", input_tokens), ("output_tokens", output_tokens),
            ("cache_read_tokens", cache_read_tokens), ("cache_write_tokens", cache_write_tokens))}
        validate.choice("cache_ttl", cache_ttl, ("5m", "1h"))
        fast = validate.boolean("fast", fast)
        if fast and self.fast_input is None:
            raise ValueError(f"{self.key} has no fast mode; fast must be False, got True")
        prompt = (tokens["input_tokens"] + tokens["cache_read_tokens"]
                  + tokens["cache_write_tokens"])
        write_kind = f"cache_write_{cache_ttl}"
        for count, kind in (("cache_read_tokens", "cache_read"), ("cache_write_tokens", write_kind)):
            if getattr(self, kind) is None and np.any(tokens[count]):
                raise ValueError(f"{self.key} publishes no {kind} price, so {count} must be 0, "
                                 f"got {tokens[count]!r}")
        speed = self.fast_input / self.input if fast else 1.0
        cost = (tokens["input_tokens"]
                * self.price_per_token("fast_input" if fast else "input", prompt_tokens=prompt)
                + tokens["output_tokens"]
                * self.price_per_token("fast_output" if fast else "output", prompt_tokens=prompt))
        for count, kind in (("cache_read_tokens", "cache_read"), ("cache_write_tokens", write_kind)):
            if getattr(self, kind) is not None:
                cost = cost + tokens[count] * speed * self.price_per_token(kind, prompt_tokens=prompt)
        return float(cost) if np.ndim(cost) == 0 else cost


def _check_date(owner: str, value) -> None:
    if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError(f"{owner}: as_of must be an ISO date 'YYYY-MM-DD' (when the prices were "
                         f"published or read), got {value!r}")
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"{owner}: as_of must be a real date 'YYYY-MM-DD', got {value!r}") from None


# --- The sheets -------------------------------------------------------------------------------

_ANTHROPIC_PRICING = "https://platform.claude.com/docs/en/about-claude/pricing"

_PRESETS = (
    PriceSheet(
        key="claude-opus-4.6", provider="Anthropic", model="Claude Opus 4.6",
        as_of="2026-03-13", source=_ANTHROPIC_PRICING,
        input=5.0, output=25.0,
        cache_write_5m=6.25, cache_write_1h=10.0, cache_read=0.50,
        fast_input=30.0, fast_output=150.0,
        notes=(
            "Base, cache and output prices: Anthropic pricing page, model table (Opus 4.6 row: "
            "$5 / $6.25 / $10 / $0.50 / $25), the same on a copy from Feb 2026 and on the page "
            "read 2026-11-29. No long-context tier: on 2026-03-13 Anthropic made the 1M window "
            "generally available for Opus 4.6 at standard prices (reported by getaibook.com, "
            "agentmastered.com and lilting.ch; we did not find Anthropic's own announcement, but "
            "its current Opus 4.6 model page lists a 1M window at $5 / $25 with no tier). "
            "Before that date see 'claude-opus-4.6-1m-beta'. Fast mode $30 / $150 "
            "(6x, 'up to 2.5x higher output tokens per second', research preview): pricing page "
            "'Fast mode pricing' section (Feb-Mar 2026 copy) and "
            "https://code.claude.com/docs/en/fast-mode ('$30/$150 MTok on Opus 4.7 and Opus "
            "4.6'). The first fast-mode docs (Feb 2026, still on the localised pages, e.g. "
            "https://platform.claude.com/docs/es/build-with-claude/fast-mode) charged $60 / $225 "
            "above 200K input tokens; later copies apply $30 / $150 across the full window. By "
            "2026-11 Anthropic no longer offers fast mode on Opus 4.6 (it moved to Opus 4.8 / "
            "5.x). Cache multipliers: 5-min write 1.25x, 1-hour write 2x, hit 0.1x of base input."
        ),
    ),
    PriceSheet(
        key="claude-opus-4.6-1m-beta", provider="Anthropic",
        model="Claude Opus 4.6 (1M-context beta)",
        as_of="2026-02-17", source=_ANTHROPIC_PRICING,
        input=5.0, output=25.0,
        long_context_threshold=200_000, long_input=10.0, long_output=37.50,
        cache_write_5m=6.25, cache_write_1h=10.0, cache_read=0.50,
        fast_input=30.0, fast_output=150.0,
        notes=(
            "Anthropic pricing page as captured between 2026-02-17 (it lists Sonnet 4.6, "
            "released that day) and 2026-03-13 (when the 1M window went GA at flat prices): "
            "'Long context pricing' table, Claude Opus 4.6: <= 200K input tokens $5 / $25, "
            "> 200K $10 / $37.50, for the 1M-token beta (usage tier 4). 'If your request "
            "exceeds 200K input tokens, all tokens incur premium pricing'; 'prompt caching "
            "multipliers apply on top of long context pricing'; 'Fast mode includes the full 1M "
            "context window at no additional long context charge' ($30 / $150). A step of 2x "
            "input and 1.5x output, the same shape as Gemini 3.1 Pro's."
        ),
    ),
    PriceSheet(
        key="claude-sonnet-4.5", provider="Anthropic", model="Claude Sonnet 4.5",
        as_of="2026-02-17", source=_ANTHROPIC_PRICING,
        input=3.0, output=15.0,
        long_context_threshold=200_000, long_input=6.0, long_output=22.50,
        cache_write_5m=3.75, cache_write_1h=6.0, cache_read=0.30,
        notes=(
            "Anthropic pricing page, model table (Sonnet 4.5: $3 / $3.75 / $6 / $0.30 / $15) and "
            "'Long context pricing' table (<= 200K input tokens $3 / $15, > 200K $6 / $22.50, "
            "1M-token beta), copy captured 2026-02-17..2026-03-12. The same long-context table "
            "appears in the docs.anthropic.com copy from late 2025 (then for Sonnet 4 / 4.5). "
            "Whether Sonnet 4.5 kept the tier after 2026-03-13 was not verified (secondary "
            "reports say only Opus 4.6 and Sonnet 4.6 became flat)."
        ),
    ),
    PriceSheet(
        key="gemini-3.1-pro", provider="Google", model="Gemini 3.1 Pro Preview",
        as_of="2026-09-20", source="https://ai.google.dev/gemini-api/docs/pricing",
        input=2.0, output=12.0,
        long_context_threshold=200_000, long_input=4.0, long_output=18.0,
        cache_read=0.20, cache_storage_per_mtok_hour=4.50,
        notes=(
            "Gemini Developer API pricing page, 'Gemini 3.1 Pro Preview' (gemini-3.1-pro-preview), "
            "Standard, paid tier, per 1M tokens: input '$2.00, prompts <= 200k tokens / $4.00, "
            "prompts > 200k tokens'; output (including thinking tokens) '$12.00 ... / $18.00, "
            "prompts > 200k'. Read verbatim in api-evangelist's transcript of the page dated "
            "2026-09-20, and the same on copies from March 2026. Context caching '$0.20, prompts "
            "<= 200k tokens / $0.40, prompts > 200k / $4.50 / 1,000,000 tokens per hour (storage "
            "price)': copy of the page last updated 2026-03-18 (read 2026-03-20), also quoted "
            "verbatim in a scraper's test fixture. No cache-write price: Gemini charges storage "
            "per hour instead. Preview model, released 2026-02-19. The lecture's '+50% above "
            "200K' (01:33:24) is the output step; input doubles."
        ),
    ),
    PriceSheet(
        key="gpt-5.4", provider="OpenAI", model="GPT-5.4",
        as_of="2026-03-05", source="https://developers.openai.com/api/docs/pricing",
        input=2.50, output=15.0,
        long_context_threshold=272_000, long_input=5.0, long_output=22.50,
        cache_read=0.25,
        notes=(
            "OpenAI API pricing page, Standard tier, text tokens: 'gpt-5.4 (<272K context "
            "length)' $2.50 input / $0.25 cached input / $15 output; 'gpt-5.4 (>272K context "
            "length)' $5 / $0.50 / $22.50. The page: 'Prompts with more than 272K input tokens "
            "are priced at 2x input and 1.5x output for the full session for standard, batch, "
            "and flex.' Read in a copy of the page source from March 2026 (before 2026-03-31); "
            "as_of is GPT-5.4's launch on 2026-03-05 (krux.news, baeseokjae.github.io), when these "
            "prices were published (a CometAPI write-up quotes the same table 'as published at "
            "the time of the announcement'; Azure lists the same $5 / $0.50 / $22.50 above 272K). "
            "OpenAI charges nothing extra for cache writes. "
            "Priority processing (faster, not a separate model) costs $5 / $0.50 / $30 (2x); "
            "it is not stored as fast mode here."
        ),
    ),
    PriceSheet(
        key="deepseek-v3.2", provider="DeepSeek", model="DeepSeek-V3.2 (deepseek-chat)",
        as_of="2026-04-13", source="https://api-docs.deepseek.com/quick_start/pricing",
        input=0.28, output=0.42, cache_read=0.028,
        notes=(
            "DeepSeek 'Models & Pricing': deepseek-chat and deepseek-reasoner = DeepSeek-V3.2, "
            "128K context, 1M input tokens (cache miss) $0.28, (cache hit) $0.028, output $0.42. "
            "Verified from copies of the official page, not the page itself (our stored copy of "
            "it is older, V3.1): benchlm.ai (published 2026-04-13, 'from the official docs'), Roo "
            "Code's provider table ('Updated Dec 9, 2025') and AvalAI's V3.2 notes ('Pricing "
            "(Unchanged)'). DeepSeek's disk-based prefix cache has no write surcharge "
            "and no storage fee. Superseded in late April 2026 by DeepSeek-V4 prices. The "
            "architecture is the course's 'deepseek-v3' model preset (MLA), plus sparse attention."
        ),
    ),
)

SHEETS: Mapping[str, PriceSheet] = MappingProxyType({s.key: s for s in _PRESETS})
"""Every price sheet, by key (read-only)."""

_ALIASES = {
    "opus 4.6": "claude-opus-4.6",
    "opus 4.6 1m beta": "claude-opus-4.6-1m-beta",
    "opus 4.6 beta": "claude-opus-4.6-1m-beta",
    "sonnet 4.5": "claude-sonnet-4.5",
    "gemini-3.1-pro-preview": "gemini-3.1-pro",
    "gemini 3.1": "gemini-3.1-pro",
    "deepseek-v3.2-chat": "deepseek-v3.2",
}


_CATALOGUE = Catalogue("price sheet", SHEETS, _ALIASES, parameter="key")


def names() -> list[str]:
    """The sheet keys, as :func:`get` accepts them."""
    return list(SHEETS)


def resolve(sheet, parameter: str = "sheet") -> PriceSheet:
    """``sheet`` as a :class:`PriceSheet`: the object itself or a key looked up as in :func:`get`;
    anything else is a ``ValueError`` naming ``parameter``."""
    return _CATALOGUE.resolve(sheet, parameter)


def get(key: str) -> PriceSheet:
    """The price sheet called ``key`` (case, spaces, hyphens, underscores and dots ignored).

    ``get("Gemini 3.1 Pro") is get("gemini-3.1-pro-preview")``; Anthropic's API model id
    ``"claude-opus-4-6"`` works too. An unknown name raises ``KeyError`` listing the known ones.
    """
    return _CATALOGUE.find(key)
