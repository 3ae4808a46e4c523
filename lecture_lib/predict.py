"""Predict, then reveal: a guess box and a reveal panel that cannot spoil a prediction.

A chapter asks a question ("at what batch does the bold line bend?"), shows :meth:`Prediction.ask`
(a text box for the guess and a **Reveal** button), derives the answer, and later shows
:meth:`Prediction.reveal` (the panel where the answer appears). Two rules make it honest:

- **Run All never spoils.** Until the learner has typed a guess, the reveal panel says "enter a guess
  first" and offers a **Show anyway** button; the answer is computed only when it is asked for.
- **The answer does not follow the sliders.** It is computed from the library's Formulas with the
  fixed constants of the question (the lecture's numbers), never from an explorer's live state, so
  moving a slider before revealing changes nothing. Where the bold line of an explorer does
  something different at its defaults (the KV cache moves B*), the reveal says so beside the answer.

One factory per question of the chapters (``board_balance_batch()``, ``two_rack_slowdown()``, ...)
builds the :class:`Prediction` with its constants; the notebooks call those, so the tests can check
every reveal in process.
"""

from __future__ import annotations

import html
import math
import numbers
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["Prediction", "parse_guess", "verdict", "FACTORIES"]

_SUFFIXES = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def parse_guess(text) -> float | None:
    """A learner's guess as a number: ``"1000"``, ``"1,000"``, ``"2e3"``, ``"2k"``, ``"25%"``,
    ``"1/4"``, ``"3x"``; ``None`` for an empty box. Anything else is a ``ValueError``."""
    from . import validate

    if text is None:
        return None
    if isinstance(text, numbers.Real) and not isinstance(text, (bool, np.bool_)):
        value = validate.scalar("text", text, positive=False)
    elif not isinstance(text, str):
        raise ValueError(f"text must be a guess written as text or a number, got {validate._describe(text)}")
    else:
        cleaned = str(text).strip().replace(",", "").replace("_", "").replace(" ", "")
        cleaned = cleaned.rstrip("×xX")
        if not cleaned:
            return None
        scale = 1.0
        if cleaned.endswith("%"):
            cleaned, scale = cleaned[:-1], 0.01
        elif cleaned[-1].lower() in _SUFFIXES and re.fullmatch(r"[0-9.eE+-]+[kKmMbBgGtT]", cleaned):
            cleaned, scale = cleaned[:-1], _SUFFIXES[cleaned[-1].lower()]
        match = re.fullmatch(r"([0-9.eE+-]+)/([0-9.eE+-]+)", cleaned)
        try:
            value = (float(match.group(1)) / float(match.group(2)) if match else float(cleaned)) * scale
        except (ValueError, ZeroDivisionError):
            raise ValueError(f"text: could not read {str(text)[:40]!r} as a number") from None
    if not math.isfinite(value):
        raise ValueError(f"text must be a finite number, got {str(text)[:40]!r}")
    return value


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def verdict(guess: float | None, actual: float) -> str:
    """One kind sentence comparing a guess with the answer (plain text)."""
    from . import validate

    actual = validate.scalar("actual", actual, positive=False)
    if guess is not None:
        guess = validate.scalar("guess", guess, positive=False)
    if guess is None:
        return "No guess was made: next time, write one down first, it makes the answer stick."
    if guess <= 0 or actual <= 0:
        return f"You guessed {_fmt(guess)}."
    factor = max(guess, actual) / min(guess, actual)
    if factor < 1.25:
        return f"You guessed {_fmt(guess)}: spot on (within {factor:.2f}×)."
    if factor < 3:
        return f"You guessed {_fmt(guess)}: the right ballpark, off by {factor:.1f}×."
    return (f"You guessed {_fmt(guess)}: off by {factor:,.0f}× (about 10^{math.log10(factor):.1f}). "
            "Worth finding which term you over- or under-estimated.")


@dataclass
class Prediction:
    """One predict-then-reveal question.

    ``answer`` is a zero-argument callable computed from library Formulas with the question's fixed
    constants; ``comparisons`` are further ``(label, callable)`` rows shown beside it (e.g. what the
    explorer's bold line does at its defaults), and ``note`` one closing sentence of explanation.
    Nothing is computed until the reveal is asked for.
    """

    name: str
    answer: Callable[[], float]
    unit: str = ""
    comparisons: tuple[tuple[str, Callable[[], float]], ...] = ()
    note: str = ""
    example: str = "e.g. 1000"
    guess: float | None = field(default=None, init=False)
    state: str = field(default="waiting", init=False)   # waiting, guessed, needs_guess, revealed
    problem: str = field(default="", init=False)        # why the last text typed could not be read
    _views: list = field(default_factory=list, init=False, repr=False)

    def __repr__(self) -> str:   # never shows the answer
        return f"Prediction({self.name!r}, state={self.state!r})"

    # ---------------------------------------------------------------- what the buttons do
    def set_guess(self, text) -> None:
        """Record what is typed in the guess box (empty clears it). Once revealed, the recorded guess
        stays what it was: editing the box afterwards cannot turn a miss into a hit."""
        if self.state == "revealed":
            return
        try:
            self.guess = parse_guess(text)
            self.problem = ""
        except ValueError as error:
            self.guess, self.problem = None, str(error)
        self.state = "guessed" if self.guess is not None else "waiting"
        self._render()

    def press_reveal(self) -> None:
        """The Reveal button: reveals when a guess is in, otherwise asks for one first."""
        self.state = "revealed" if self.guess is not None else "needs_guess"
        self._render()

    def press_show_anyway(self) -> None:
        """The Show anyway button: reveal without a guess."""
        self.state = "revealed"
        self._render()

    # ---------------------------------------------------------------- what is shown
    def message_html(self) -> str:
        """The panel's current HTML. It holds the answer only once the state is "revealed"."""
        unit = f" {self.unit}" if self.unit else ""
        if self.state == "revealed":
            actual = float(self.answer())
            rows = [f"<b>{html.escape(self.name)}</b>: {html.escape(verdict(self.guess, actual))}",
                    f"Answer, from the lecture's fixed numbers: <b>{html.escape(_fmt(actual) + unit)}</b>"]
            for label, value in self.comparisons:
                rows.append(f"{html.escape(label)}: <b>{html.escape(_fmt(float(value())) + unit)}</b>")
            if self.note:
                rows.append(html.escape(self.note))
            return "<br>".join(rows)
        problem = f"{html.escape(self.problem)}; write a plain number ({html.escape(self.example)}). " \
            if self.problem else ""
        if self.state == "guessed":
            return f"Your guess, <b>{html.escape(_fmt(self.guess) + unit)}</b>, is saved. Press <b>Reveal</b> when ready."
        if self.state == "needs_guess":
            return (f"{problem}✏️ <b>Enter a guess first</b> in the box under the question, then press Reveal; "
                    "or press <b>Show anyway</b>.")
        return (f"{problem}✏️ <b>Enter a guess first</b> (in the box under the question above), then press "
                "Reveal. The answer stays hidden until then; <b>Show anyway</b> reveals it without a guess.")

    def _style(self) -> str:
        colour = "#9467bd" if self.state == "revealed" else "#7f7f7f"
        return f"border-left:4px solid {colour};padding:4px 10px"

    def _render(self) -> None:
        text = f"<div style='{self._style()}'>{self.message_html()}</div>"
        for view in self._views:
            view.status.value = text
            view.reveal_button.layout.display = "none" if self.state == "revealed" else None
            offer_anyway = self.state == "needs_guess" or (self.state == "waiting" and view.kind == "reveal")
            view.anyway_button.layout.display = None if offer_anyway else "none"

    def _view(self, kind: str):
        import ipywidgets as widgets

        box = widgets.Text(value="" if self.guess is None else _fmt(self.guess), placeholder=self.example,
                           description="your guess", continuous_update=True,
                           layout=widgets.Layout(width="280px"))
        reveal_button = widgets.Button(description="Reveal", button_style="primary", icon="eye")
        anyway_button = widgets.Button(description="Show anyway", tooltip="reveal without a guess")
        status = widgets.HTML()
        box.observe(lambda change: self.set_guess(change["new"]), names="value")
        reveal_button.on_click(lambda _button: self.press_reveal())
        anyway_button.on_click(lambda _button: self.press_show_anyway())
        row = [box, reveal_button, anyway_button] if kind == "ask" else [reveal_button, anyway_button]
        view = _view_class()([widgets.HBox(row), status])
        view.kind, view.box, view.status = kind, box, status
        view.reveal_button, view.anyway_button = reveal_button, anyway_button
        self._views.append(view)
        self._render()
        return view

    def ask(self):
        """The widget under the question: the guess box, Reveal, and (after an empty Reveal) Show anyway."""
        return self._view("ask")

    def reveal(self):
        """The widget where the answer appears: "enter a guess first" until there is one."""
        return self._view("reveal")


def _view_class():
    """A VBox whose plain-text form is what its panel says (a front end without widgets, and the
    tests reading an executed notebook, see "Enter a guess first", not a truncated widget repr)."""
    import ipywidgets as widgets

    global _VIEW
    if _VIEW is None:
        class PredictionView(widgets.VBox):
            def __repr__(self) -> str:
                text = re.sub(r"<[^>]+>", "", self.status.value.replace("<br>", " · ") if hasattr(self, "status") else "")
                return "Prediction: " + html.unescape(text).replace("✏️ ", "")

        _VIEW = PredictionView
    return _VIEW


_VIEW = None


# ==================================================================================== the chapters
# Each factory fixes the question's constants; the answer is a Formula of the library evaluated at them.

BOARD_CONTEXT = 1024        # the BatchExplorer's default context length (tokens)
BOARD_KV_BYTES = 1          # its default KV-cache format, fp8 (bytes per value)


def board_balance_batch() -> Prediction:
    """Ch1 §4: B* for the board's DeepSeek (37 B active, sparsity 8) on one GB200 NVL72 in fp4."""
    from . import hardware, models, roofline

    rack = hardware.get_system("GB200 NVL72")
    n_active, n_total = 37e9, 8 * 37e9

    def weights_only() -> float:
        return roofline.BALANCE_BATCH(FLOPs=rack.flops["fp4"], mem_bw=rack.hbm_bandwidth, bytes_param=0.5,
                                      N_total=n_total, N_active=n_active)

    def with_kv() -> float:
        bytes_tok = models.get("deepseek-v3").kv_bytes_per_token(BOARD_KV_BYTES, context_len=BOARD_CONTEXT)
        return roofline.balance_batch_with_kv(n_active=n_active, n_total=n_total, flops=rack.flops["fp4"],
                                              mem_bw=rack.hbm_bandwidth, bytes_param=0.5,
                                              len_ctx=BOARD_CONTEXT, bytes_tok=bytes_tok)

    return Prediction(
        "B* on the board's example (weights only, as on the board)", weights_only, "sequences",
        comparisons=((f"where the explorer's bold line really bends at its defaults (B* with the KV cache, "
                      f"{BOARD_CONTEXT:,} tokens of context, fp8 KV)", with_kv),),
        note="The board's B* ignores the KV fetch. With a KV cache the memory line slopes upward, so the bold "
             "line meets the compute line later: the dashed B* with KV in the explorer sits to the right of the "
             "dotted weights-only one, and the gap grows with the context length.")


def two_rack_slowdown() -> Prediction:
    """Ch2: how many times longer an MoE layer's all-to-all takes on two GB200 NVL72 racks than on one."""
    from . import hardware, moe

    def slowdown() -> float:
        rack = hardware.get_system("GB200 NVL72")
        return moe.A2A_SLOWDOWN(n_racks=2, link_ratio=moe.link_ratio_of(rack))

    return Prediction("two racks instead of one, GB200 NVL72 links", slowdown, "× slower", example="e.g. 2")


def decode_idle() -> Prediction:
    """Ch3: the idle fraction of a rack when one request at a time runs through 4 pipeline stages."""
    from . import pipeline

    return Prediction("idle fraction, one request at a time on 4 racks",
                      lambda: pipeline.decode_idle_fraction(stages=4, microbatches=1), example="e.g. 0.5")


def training_bubble() -> Prediction:
    """Ch3: the GPipe bubble with P = 4 stages and m = 4 micro-batches."""
    from . import pipeline

    return Prediction("GPipe bubble, P = m = 4", lambda: pipeline.bubble_fraction(stages=4, microbatches=4),
                      example="e.g. 0.25")


def kv_shrink_factor() -> Prediction:
    """Ch4: by what factor the KV cache per GPU shrinks from P = 1 to P = 4 (every rack kept busy)."""
    from . import pipeline_memory as pm
    from .symbols import P

    def factor() -> float:
        return float(pm.KV_PER_GPU.rhs.subs(P, 1) / pm.KV_PER_GPU.rhs.subs(P, 4))

    return Prediction("KV per GPU shrinks by", factor, "×", example="e.g. 4")


def overtraining() -> Prediction:
    """Ch5: the lecture's over-training factor for a ~100 B-active frontier model."""
    from . import scaling

    return Prediction("your over-training guess", lambda: scaling.lecture_estimate()["overtraining"],
                      "× Chinchilla", example="e.g. 3")


def kv_bytes_at_price_step() -> Prediction:
    """Ch6: KV bytes per token implied by a price step at 200K for a 100 B-active model (the board)."""
    from . import context

    return Prediction(
        "KV bytes per token at the 200K step",
        lambda: context.KV_BYTES_FROM_PRICE_STEP_BOARD(mem_bw=1, mults=300, N_active=100e9, len_ctx=200e3),
        "bytes per token", example="e.g. 50000")


CIPHER_SEED = 7             # the chapter's toy cipher
AVALANCHE_SEED = 1          # the inputs its avalanche is measured on


def cipher_avalanche() -> Prediction:
    """Ch7: the fraction of output bits of the toy cipher that flip after 8 rounds when one input bit flips."""
    from . import reversible as rv

    def fraction() -> float:
        cipher = rv.toy_cipher(rounds=16, half_bits=16, seed=CIPHER_SEED)
        return float(rv.avalanche_curve(cipher, bit=0, n_samples=4096, seed=AVALANCHE_SEED)[8])

    return Prediction("your cipher guess (after 8 rounds)", fraction, "of the output bits", example="e.g. 0.1")


def network_avalanche() -> Prediction:
    """Ch7: the fraction of output signs of a 16-layer residual net (weight scale 0.3) that flip."""
    from . import reversible as rv

    def fraction() -> float:
        return float(rv.network_avalanche(kind="residual", weight_scale=0.3, depth=16, bit=0)["flip_fraction"][-1])

    return Prediction("your network guess", fraction, "of the output signs", example="e.g. 0.1")



def batch1_share() -> Prediction:
    """Ch8: the share of its bound that a tuned engine reaches decoding one sequence of a 70B model on one H200."""
    from . import measurements

    return Prediction("batch-1 share of the bound (Llama-3.3-70B, one H200)",
                      lambda: measurements.get("trtllm-llama70b-h200-batch1").efficiency,
                      "of the bound", example="e.g. 0.5")


def deepseek_decode_share() -> Prediction:
    """Ch8: the share of its bound that DeepSeek's published H800 decode throughput reaches."""
    from . import measurements

    return Prediction("DeepSeek decode share of the bound (per H800 node)",
                      lambda: measurements.get("deepseek-decode-h800").efficiency,
                      "of the bound", example="e.g. 0.5")


FACTORIES = {
    "board_balance_batch": board_balance_batch, "two_rack_slowdown": two_rack_slowdown,
    "decode_idle": decode_idle, "training_bubble": training_bubble, "kv_shrink_factor": kv_shrink_factor,
    "overtraining": overtraining, "kv_bytes_at_price_step": kv_bytes_at_price_step,
    "cipher_avalanche": cipher_avalanche, "network_avalanche": network_avalanche,
    "batch1_share": batch1_share, "deepseek_decode_share": deepseek_decode_share,
}
"""Every chapter's prediction, by name (the tests walk it)."""
