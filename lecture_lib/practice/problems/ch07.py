"""Chapter 7's practice problems (solutions/07_neural_nets_and_cryptography.ipynb).

Every expected value is computed from :mod:`lecture_lib.reversible` (and the presets) with the
inputs the problem statement names; see :mod:`lecture_lib.practice.checks` for how answers are judged.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from lecture_lib import hardware, models
from lecture_lib import reversible as rv
from lecture_lib.symbols import B, act_values, bytes_value, d_model, len_seq, n_layers

from ..registry import Mistake, Probe, Problem, register

# Problem 7.1: f(x) = x² + 3 (mod 256) on bytes. f(13) = f(243): not invertible.
P1_X, P1_Z = 13, 77
# Problem 7.2: float32, y = 21, f(x) = 3e8 (float32 spacing there is 32).
P2_Y, P2_F = 21.0, 3e8
# Problem 7.3: the explorer's cipher (seed 7), 512 blocks (seed 1), one bit of the left half.
P3_BIT = 16
# Problem 7.5: a one-bit input difference in the left half, 2 rounds of the seed-0 cipher.
P5_DIFFERENCE, P5_ROUNDS = 1 << 20, 2
# Problem 7.6 and 7.8: Llama 3 70B, one sequence of 8,192 tokens, bf16 activations.
P6_MODEL, P6_LEN = "llama-3-70b", 8192
# Problem 7.8: Llama 3 70B's activations alone in one H100.
P8_CHIP = "H100"
# Problem 7.9: DeepSeek-V3 on an H100, fp8 KV cache and fp8 multiplies.
P9_MODEL, P9_CHIP = "deepseek-v3", "H100"
# Problem 7.10: a 12-layer RevNet on two streams of 16 features, 32 tokens.
P10_NET = dict(n_layers=12, width=16, hidden=64, seed=0)
P10_TOKENS = 32


def square_plus_three(x: np.ndarray) -> np.ndarray:
    """Problem 7.1's round function: x² + 3 on bytes (wraps mod 256); f(13) = f(243)."""
    return (x * x + np.uint8(3)).astype(np.uint8)


def _feistel_by_hand(op: str = "xor") -> float:
    x, z = np.array([P1_X], np.uint8), np.array([P1_Z], np.uint8)
    if op == "sub":
        return float((int(P1_Z) - int(square_plus_three(x)[0])) % 256)
    if op == "add":
        return float((int(P1_Z) + int(square_plus_three(x)[0])) % 256)
    if op == "xor x":
        return float(P1_Z ^ P1_X)
    return float(rv.feistel_xor_inverse(x, z, square_plus_three)[1][0])


def _roundtrip_with_half_the_spacing() -> float:
    """y rounded to a grid of half float32's real spacing near f(x): the off-by-one-bit slip 2^(e-24)."""
    half = float(np.spacing(np.float32(P2_F))) / 2
    return round(P2_Y / half) * half


def _float_roundtrip() -> float:
    x, y = np.zeros(1, np.float32), np.array([P2_Y], np.float32)

    def f(v):
        return np.full_like(v, P2_F)

    _, z = rv.feistel_add(x, y, f)
    return float(rv.feistel_add_inverse(x, z, f)[1][0])


def _rounds_to_avalanche(bit: int = P3_BIT) -> float:
    cipher = rv.toy_cipher(rounds=16, seed=7)
    return float(rv.rounds_to_avalanche(rv.avalanche_curve(cipher, bit=bit, n_samples=512, seed=1)))


def _residual_flips() -> str:
    fraction = rv.network_avalanche(kind="residual", weight_scale=0.1, depth=16, width=32, bit=0)["flip_fraction"][-1]
    options = {"none": 0.0, "about 1/32": 1 / 32, "about 1/4": 0.25, "about 1/2": 0.5}
    return min(options, key=lambda name: abs(options[name] - fraction))


def _top_differential(rounds: int = P5_ROUNDS) -> float:
    cipher = rv.toy_cipher(rounds=16, seed=0)
    return rv.top_difference_probability(cipher, input_difference=P5_DIFFERENCE, rounds=rounds, n_samples=4096)[1]


def _sbox_best_count() -> float:
    """The largest entry of PRESENT's difference table for a one-bit input difference (lowest bit), out of 16."""
    sbox = rv.PRESENT_SBOX.astype(int)
    return float(np.bincount([sbox[v] ^ sbox[v ^ 1] for v in range(16)], minlength=16).max())


def _llama_standard(values_per_layer: float = rv.ACTIVATION_VALUES_PER_LAYER) -> float:
    llama = models.get(P6_MODEL)
    return rv.activation_memory(strategy="standard", n_layers=llama.n_layers, d_model=llama.d_model, len_seq=P6_LEN,
                                bytes_per_value=2, values_per_layer=values_per_layer)


def _crossover_depth() -> sp.Expr:
    return rv.CROSSING_DEPTH.rhs


def _longest_sequence(strategy: str = "reversible", *, layers: float | None = None,
                      values_per_layer: float = rv.ACTIVATION_VALUES_PER_LAYER, capacity: float | None = None) -> float:
    """The sequence length whose activations alone fill one H100's HBM (bf16, one sequence)."""
    llama, h100 = models.get(P6_MODEL), hardware.get(P8_CHIP)
    formula = {"reversible": rv.ACT_REVERSIBLE, "standard": rv.ACT_STANDARD}[strategy]
    length = sp.solve(sp.Eq(formula.rhs, capacity or h100.hbm_capacity), len_seq)[0]
    values = {n_layers: layers or llama.n_layers, d_model: llama.d_model, bytes_value: 2, B: 1,
              act_values: values_per_layer}
    return float(length.subs(values))


def _longest_reversible_times_depth() -> float:
    """The reversible limit with the memory multiplied by the depth, as if every layer kept its streams."""
    return _longest_sequence() / models.get(P6_MODEL).n_layers


def _longest_in_gib() -> float:
    """HBM capacity read as GiB instead of GB."""
    return _longest_sequence(capacity=hardware.get(P8_CHIP).hbm_capacity / 1e9 * 2 ** 30)


def _kv_advantage(*, params: str = "active", flops_per_param: int = 2, layers_read: int | None = None) -> float:
    model, chip = models.get(P9_MODEL), hardware.get(P9_CHIP)
    trade = rv.kv_trade(model, chip)
    n = model.params_active if params == "active" else model.params_total
    layer_share = 1.0 if layers_read is None else layers_read / model.n_layers
    return trade["advantage"] * (n / model.params_active) * (flops_per_param / 2) / layer_share


def _revnet_saving(ratio: str = "stored/reversible") -> float:
    net = rv.random_revnet(**P10_NET)
    x1, x2, d_y1, d_y2 = np.random.default_rng(0).normal(size=(4, P10_TOKENS, P10_NET["width"]))
    stored = rv.revnet_backward(net, x1, x2, d_y1, d_y2, method="stored").activation_bytes
    rebuilt = rv.revnet_backward(net, x1, x2, d_y1, d_y2, method="reversible").activation_bytes
    return float(stored / rebuilt) if ratio == "stored/reversible" else float(rebuilt / stored)


register("7.1", Problem(
    "Undo a Feistel block by hand", "number", _feistel_by_hand, rtol=0.001,
    mistakes=(Mistake(lambda: _feistel_by_hand("sub"),
                      "That undoes an addition. This block mixes with XOR (addition in GF(2)), and XOR is "
                      "its own inverse."),
              Mistake(lambda: _feistel_by_hand("add"),
                      "That adds f(x) again (mod 256). The block mixed with XOR, and XOR is undone by XOR."),
              Mistake(lambda: _feistel_by_hand("xor x"),
                      "That XORs z with x itself. The block XORed y with f(x): compute f(13) first."),),
    wrong_hint="Compute f(x) first (mod 256), then combine it with z the same way the block combined it with y."))
register("7.2", Problem(
    "What comes back from a float Feistel block", "number", _float_roundtrip, rtol=0.01,
    mistakes=(Mistake(lambda: P2_Y,
                      "That would be true with exact arithmetic. In single precision, y + f(x) is rounded to "
                      "the nearest representable number before it is stored."),
              Mistake(lambda: 0.0,
                      "y did not vanish: y + f(x) is rounded to the *nearest* float32, which need not be the one "
                      "below. Check the spacing near f(x) and which neighbour is nearer."),
              Mistake(_roundtrip_with_half_the_spacing,
                      "Check the spacing: float32 keeps 23 bits after the leading 1, so numbers in [2^e, 2^(e+1)) "
                      "are 2^(e - 23) apart. Which e has 2^e <= 3e8?"),),
    wrong_hint="Find the spacing of single-precision numbers near f(x): 2^(e - 23), where 2^e <= f(x) "
               "< 2^(e+1)."))
register("7.3", Problem(
    "Read the avalanche explorer: rounds until it looks random", "number", _rounds_to_avalanche, rtol=0.1,
    unit="rounds",
    mistakes=(Mistake(lambda: _rounds_to_avalanche(0),
                      "That is the count for a bit of the right half. A bit of the left half needs one "
                      "round before it reaches a round function at all."),)))
register("7.4", Problem(
    "The same experiment on a residual network", "choice", _residual_flips,
    options=("none", "about 1/32", "about 1/4", "about 1/2"),
    alternates={"none": ("0", "zero", "nothing"),
                "about 1/32": ("1/32", "0.03", "0.031", "3%", "3.1%", "one bit", "1 in 32", "one in 32",
                               "about 1 in 32", "about one in 32", "one sign", "only the flipped one"),
                "about 1/4": ("1/4", "0.25", "25%", "a quarter", "about a quarter"),
                "about 1/2": ("1/2", "0.5", "50%", "half", "about half")},
    wrong_hint="Think about what the skip connection does to the flipped input bit, and how much small "
               "weights can add to the other coordinates."))
register("7.5", Problem(
    "Differentiating over GF(2): the best two-round differential", "number", _top_differential, rtol=0.05,
    mistakes=(Mistake(lambda: _top_differential(1),
                      "That is after one round: the flipped bit only moves to the other half. Run two."),
              Mistake(lambda: 1 / 16,
                      "That would be a perfectly flat S-box. PRESENT's difference table has larger entries: "
                      "count, for a one-bit input difference, how many of the 16 inputs give the commonest "
                      "output difference."),
              Mistake(_sbox_best_count, rtol=0.05,
                      message="That looks like a count out of the S-box's 16 inputs. The question asks for a "
                              "probability."))))
register("7.6", Problem(
    "Activation memory of standard training", "number", _llama_standard, rtol=0.02, unit="bytes",
    mistakes=(Mistake(lambda: _llama_standard(1),
                      "That keeps only each layer's input (one d_model vector per token per layer). Standard "
                      "training keeps every intermediate activation: about 20 d_model-sized values."),
              Mistake(lambda: _llama_standard() / models.get(P6_MODEL).n_layers,
                      "That is one layer's activations. Standard training keeps every layer's until the backward "
                      "pass reaches it."),)))
register("7.7", Problem(
    "Where reversible layers overtake checkpointing", "expression", _crossover_depth,
    wrong_hint="Set the best checkpointing memory equal to the reversible memory and solve for n_layers; "
               "everything but act_values cancels.",
    probes=(Probe({"act_values": 20}, "act_values = 20", "a little above 6 layers, where the two cross"),)))
register("7.8", Problem(
    "The longest sequence that fits", "number", _longest_sequence, rtol=0.02, unit="tokens",
    mistakes=(Mistake(lambda: _longest_sequence("standard"),
                      "That is the limit for standard training, which keeps every layer's activations. "
                      "The question is about reversible layers."),
              Mistake(lambda: _longest_sequence("standard", layers=1),
                      "That holds one layer's working set (c_act values) but not the two streams the reversible "
                      "pass rebuilds, of width d_model each."),
              Mistake(lambda: _longest_sequence(values_per_layer=0),
                      "That holds only the two streams. While it recomputes a layer, the reversible pass also needs "
                      "that layer's working set: c_act values of width d_model per token."),
              Mistake(_longest_reversible_times_depth,
                      "Reversible memory does not grow with depth: the backward pass rebuilds each layer's input "
                      "from its output, so nothing is kept per layer."),
              Mistake(_longest_in_gib,
                      "hbm_capacity is in bytes (decimal GB x 1e9), not GiB."),)))
register("7.9", Problem(
    "Recompute or store a token's KV?", "number", _kv_advantage, rtol=0.03,
    mistakes=(Mistake(lambda: _kv_advantage(flops_per_param=6),
                      "6 FLOPs per parameter is training (forward and backward). Recomputing KV is a "
                      "forward pass: 2 FLOPs per active parameter."),
              Mistake(lambda: _kv_advantage(params="total"),
                      "A forward pass multiplies through the active parameters only, not every expert."),
              Mistake(lambda: 1 / _kv_advantage(),
                      "Upside down: the question asks how many times longer recomputing takes than reading."),
              Mistake(lambda: _kv_advantage(layers_read=1),
                      "That reads one layer's KV. A token's KV cache spans every layer: take "
                      "kv_bytes_per_token for the whole model."))))
register("7.10", Problem(
    "Measure what a RevNet saves", "number", _revnet_saving, rtol=0.02,
    mistakes=(Mistake(lambda: _revnet_saving("reversible/stored"),
                      "Upside down: the question asks how many times more the stored-activation pass holds."),
              Mistake(lambda: float(P10_NET["n_layers"]),
                      "Close, but measure it: the reversible pass holds a little more than one layer's "
                      "cache (the rebuilt streams), and the stored pass also keeps the outputs."))))


# --- 'Why' problems (issue 13): conceptual choices, each with a nudge for every tempting wrong letter.
# The expected letter is checked against the library where the reason is a computation.

WHY_OPTIONS = ('a', 'b', 'c', 'd')


def _convergent() -> str:
    """7.11: the toy cipher mixes one flipped bit into about half of all output bits."""
    curve = rv.avalanche_curve(rv.toy_cipher(rounds=16, half_bits=16, seed=7), bit=0, n_samples=1024)
    if not abs(float(curve[8]) - 0.5) < 0.05:
        raise RuntimeError(f"problem 7.11 assumes the toy cipher avalanches, got {curve[8]}")
    return "c"


def _residuals_predictable() -> str:
    """7.12: a residual network at small weights flips few output signs."""
    flips = rv.network_avalanche(kind="residual", weight_scale=0.3, depth=16, bit=0)["flip_fraction"][-1]
    if not flips < 0.25:
        raise RuntimeError(f"problem 7.12 assumes a residual net barely avalanches, got {flips}")
    return "a"


def _opposite_trades() -> str:
    """7.13: reversible training costs more FLOPs and less memory than standard training."""
    more_flops = (rv.training_flops_per_token(strategy="reversible", n_active=1)
                  > rv.training_flops_per_token(strategy="standard", n_active=1))
    sizes = dict(n_layers=32, d_model=4096, len_seq=4096)
    less_memory = (rv.activation_memory(strategy="reversible", **sizes)
                   < rv.activation_memory(strategy="standard", **sizes))
    if not (more_flops and less_memory):
        raise RuntimeError("problem 7.13 assumes a RevNet trades compute for memory")
    return "b"


register('7.11', Problem(
    'Why do ciphers and neural networks look alike?', "choice", _convergent, options=WHY_OPTIONS,
    nudges={
            'a': 'Only one transfer is known, Feistel to RevNets (2017), long after both fields had layered designs.',
            'b': "The lecture's answer is a shared need: mixing every input into every output.",
            'd': 'Networks need not be invertible (only RevNets are); ciphers must be.'}))

register('7.12', Problem(
    'Why would residual connections and LayerNorm ruin a cipher?', "choice", _residuals_predictable, options=WHY_OPTIONS,
    nudges={
            'b': 'They add almost no parameters; think about what they do to a small change of the input.',
            'c': 'A residual block can be made invertible (RevNets); the issue is predictability.',
            'd': 'Speed is not the issue; think of differential cryptanalysis.'}))

register('7.13', Problem(
    'Why does a RevNet trade the opposite way to a KV cache?', "choice", _opposite_trades, options=WHY_OPTIONS,
    nudges={
            'a': 'A KV cache costs memory: bytes_tok for every token of context.',
            'c': 'A RevNet runs an extra forward pass: 8·N instead of 6·N FLOPs per token.',
            'd': "It keeps activation memory constant in depth, rebuilding each layer's input on the way back."}))


# --- Issue 49 §5: why a reversible network cannot stand in for the KV cache.
# 7.14: a reversible Llama-3-70B keeps no KV cache; decoding one token with 32,768 tokens of context rebuilds every
# earlier token's layer inputs by inversion: FLOPS_DECODE_REVERSIBLE / FLOPS_DECODE_CACHED = 1 + len_ctx.
REV_DECODE = dict(model="llama-3-70b", context=32_768)


def _rev_decode_ratio() -> float:
    n_active = models.get(REV_DECODE["model"]).params_active
    return float(rv.FLOPS_DECODE_REVERSIBLE(N_active=n_active, len_ctx=REV_DECODE["context"])
                 / rv.FLOPS_DECODE_CACHED(N_active=n_active))


register("7.14", Problem(
    "A reversible network without a KV cache", "number", _rev_decode_ratio, rtol=0.02, unit="× the FLOPs",
    mistakes=(Mistake(lambda: 1.0,
                      "That assumes inversion rebuilds the cache for free. Inverting a layer rebuilds the new token's "
                      "own inputs; the cache holds the keys and values of the earlier tokens."),
              Mistake(lambda: 2.0,
                      "That is one inversion of the new token's layers. Every earlier token needs its own inversion, "
                      "at every step."),
              Mistake(lambda: float(rv.FLOPS_RECOMPUTE.rhs / rv.FLOPS_STANDARD.rhs),
                      "That is the extra forward pass of reversible training (8N against 6N). Decoding looks back "
                      "at other tokens, which training's backward pass does not.")),
    wrong_hint="Count forward passes per generated token: the new token's own, plus one inversion (a forward pass's "
               "FLOPs) for each earlier token whose keys and values are needed."))
