"""Chapter 7: convergent evolution between neural nets and ciphers (lecture 02:04:02-02:13:50).

Ciphers and neural networks share a shape: many layers that mix every input into every output.
They want opposite things: a cipher makes structured data look random, a network pulls structure
out of data that looks random. This module makes the chapter's claims runnable in NumPy:

1. **Feistel blocks** (E7.1, lecture 02:08:58): ``(x, y) -> (x, y ⊕ f(x))`` on unsigned integers is
   exactly invertible for *any* ``f``, even a many-to-one one; ``(x, y) -> (x, y + f(x))`` on floats
   is invertible up to one rounding per add (:func:`roundtrip_error_bound` states the bound).
2. **The avalanche property** (02:07:56): a toy multi-round Feistel cipher on bit blocks, where
   flipping one input bit flips about half the output bits after a few rounds, against the same
   experiment on a residual network with small weights, where it flips almost nothing.
   :func:`top_difference_probability` is the first step of differential cryptanalysis ("differentiating"
   over GF(2), 02:06:58).
3. **RevNets** (E7.2, Gomez et al. 2017, arXiv 1707.04585, lecture 02:10:36): the Feistel coupling
   with transformer-style blocks (layernorm + MLP), its exact inverse, and a backward pass that
   rebuilds each layer's input from its output "in lockstep" (02:12:55), checked against ordinary
   backpropagation that stores activations. Both backward passes are written by hand in NumPy.
4. **The two memory/compute trades** (E7.3, 02:12:21 and 02:13:11): activation memory against depth
   for standard training (∝ L), checkpointing (∝ √L, Chen et al. 2016, arXiv 1604.06174) and
   reversible layers (constant), each with its extra compute; and the KV cache, which spends memory
   to save compute (Chapter 6, E6.6).

Everything random takes a ``seed`` so that notebooks are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sp

from . import validate
from .formula import Formula, simplify, solve
from .symbols import (B, FLOPs, L_cross, N_active, act_values, bytes_tok, bytes_value, d_model, flops_decode,
                      flops_train, k_seg, len_ctx,
                      kv_advantage, len_seq, m_act, mem_bw, n_layers, rate_kv, rate_rev, t_kv_read,
                      t_kv_recompute)

# ================================================================================ validation helpers


def _array(name: str, value, *, kinds: str, what: str) -> np.ndarray:
    """``value`` as a NumPy array whose dtype kind is in ``kinds`` ('u' unsigned, 'f' float)."""
    if not isinstance(value, np.ndarray):
        raise ValueError(f"{name} must be a NumPy array of {what}, got {type(value).__name__}")
    if value.dtype.kind not in kinds:
        raise ValueError(f"{name} must be a NumPy array of {what}, got dtype {value.dtype}")
    return value


MAX_SAMPLES = 1_000_000     # random blocks or inputs per measurement
MAX_DEPTH = 1024            # layers, rounds, blocks: every loop over them is bounded
MAX_WIDTH = 4096            # units of one layer
MAX_WORK = 2_000_000_000    # multiply-adds one call may spend (samples x width^2 x depth, ...)


def _work(what: str, amount: int) -> None:
    if amount > MAX_WORK:
        raise ValueError(f"{what} = {amount:,} must be <= {MAX_WORK:,}, so one call stays quick and fits in memory")


def _seed(seed) -> int:
    return validate.integer("seed", seed, minimum=0)


def _f_output(f, x: np.ndarray, like: np.ndarray, *, exact_dtype: bool) -> np.ndarray:
    if not callable(f):
        raise ValueError(f"f must be a function of one array, got {type(f).__name__}")
    out = np.asarray(f(x))
    if out.shape != like.shape:
        raise ValueError(f"f must return an array shaped like the other half {like.shape}, got {out.shape}")
    if exact_dtype and out.dtype != like.dtype:
        raise ValueError(f"f must return dtype {like.dtype} (the other half's), got {out.dtype}")
    if not exact_dtype:
        if out.dtype.kind not in "fiu":
            raise ValueError(f"f must return real numbers, got dtype {out.dtype}")
        with np.errstate(over="ignore", invalid="ignore"):
            out = out.astype(like.dtype)
        if not np.all(np.isfinite(out)):
            raise ValueError("f must return finite values (in the other half's dtype), got inf or nan")
    return out


# ================================================================================ 1. Feistel blocks


def feistel_xor(x: np.ndarray, y: np.ndarray, f) -> tuple[np.ndarray, np.ndarray]:
    """One Feistel block on unsigned integers: ``(x, y) -> (x, y ⊕ f(x))`` (lecture E7.1, 02:08:58).

    ``f`` may be any function from ``x``'s shape to ``y``'s shape and dtype, invertible or not;
    the block is still a bijection, undone by :func:`feistel_xor_inverse`. XOR is addition in
    GF(2)^n, the cipher world's "+".
    """
    _array("x", x, kinds="u", what="unsigned integers")
    _array("y", y, kinds="u", what="unsigned integers")
    return x, y ^ _f_output(f, x, y, exact_dtype=True)


def feistel_xor_inverse(x: np.ndarray, z: np.ndarray, f) -> tuple[np.ndarray, np.ndarray]:
    """Undo :func:`feistel_xor`: ``y = z ⊕ f(x)``, exactly, because ``a ⊕ b ⊕ b = a``."""
    _array("x", x, kinds="u", what="unsigned integers")
    _array("z", z, kinds="u", what="unsigned integers")
    return x, z ^ _f_output(f, x, z, exact_dtype=True)


def feistel_add(x: np.ndarray, y: np.ndarray, f) -> tuple[np.ndarray, np.ndarray]:
    """One Feistel block on floats: ``(x, y) -> (x, y + f(x))`` (lecture E7.1, 02:09:21).

    ``f(x)`` is cast to ``y``'s dtype, the same way in both directions, so the inverse
    (:func:`feistel_add_inverse`) loses only the rounding of one add and one subtract; see
    :func:`roundtrip_error_bound`.
    """
    _array("x", x, kinds="f", what="floats")
    _array("y", y, kinds="f", what="floats")
    z = y + _f_output(f, x, y, exact_dtype=False)
    if not np.all(np.isfinite(z)):
        raise ValueError("y + f(x) overflowed to inf: y and f(x) must stay within the dtype's range")
    return x, z


def feistel_add_inverse(x: np.ndarray, z: np.ndarray, f) -> tuple[np.ndarray, np.ndarray]:
    """Undo :func:`feistel_add`: ``y = z - f(x)`` (lecture 02:10:09), up to rounding."""
    _array("x", x, kinds="f", what="floats")
    _array("z", z, kinds="f", what="floats")
    return x, z - _f_output(f, x, z, exact_dtype=False)


def unit_roundoff(dtype) -> float:
    """u = eps/2 of a float dtype: the largest relative error of one correctly rounded operation."""
    try:
        if dtype is None:
            raise TypeError("None is float64 to NumPy, but no one means it")
        dtype = np.dtype(dtype)
    except (TypeError, ValueError, SyntaxError):   # NumPy parses text such as '01' as a field list: SyntaxError
        raise ValueError(f"dtype must be a NumPy float dtype such as np.float32, got {validate._describe(dtype)}") from None
    if isinstance(dtype, bool) or dtype.kind != "f":
        raise ValueError(f"dtype must be a float dtype, got {dtype}")
    return float(np.finfo(dtype).eps) / 2


def roundtrip_error_bound(y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Elementwise bound on ``|y_back - y|`` after :func:`feistel_add` then its inverse.

    With ``z = fl(y + f)`` and ``y_back = fl(z - f)`` and unit roundoff u (the same ``f`` both ways):
    ``z - f = y + (y + f)·δ₁`` and ``y_back = (z - f)(1 + δ₂)`` with ``|δ| ≤ u``, so
    ``|y_back - y| ≤ u·|y| + u·|z|·(1 + u)/(1 - u)``. The bound returned,
    ``u·(|y| + |z|)·(1 + u)/(1 - u)``, adds a sliver of slack to the first term so that it also
    covers float16, which NumPy rounds twice (via float32). Only the add's and the subtract's
    roundings enter; ``f`` itself may be as inexact as it likes, because it sees the same ``x`` both times.
    """
    _array("y", y, kinds="f", what="floats")
    _array("z", z, kinds="f", what="floats")
    if y.shape != z.shape:
        raise ValueError(f"y and z must have the same shape, got {y.shape} and {z.shape}")
    u = unit_roundoff(y.dtype)
    return u * (np.abs(y.astype(float)) + np.abs(z.astype(float))) * (1 + u) / (1 - u)


# ================================================================================ a small random MLP


@dataclass(frozen=True, eq=False)
class MLP:
    """A one-hidden-layer MLP ``tanh(x W_in + b_in) W_out + b_out``: an arbitrary, non-invertible f."""

    w_in: np.ndarray
    b_in: np.ndarray
    w_out: np.ndarray
    b_out: np.ndarray

    def __post_init__(self):
        for name, ndim in (("w_in", 2), ("b_in", 1), ("w_out", 2), ("b_out", 1)):
            value = getattr(self, name)
            if np.ndim(value) != ndim:
                raise ValueError(f"{name} must be a {ndim}-D array of floats, got {validate._describe(value)}")
            object.__setattr__(self, name, np.asarray(validate.number(name, value, positive=False)))
        n_hidden = self.w_in.shape[1]
        if self.b_in.shape != (n_hidden,) or self.w_out.shape[0] != n_hidden or self.b_out.shape != self.w_out.shape[1:]:
            raise ValueError(f"the shapes do not chain: w_in {self.w_in.shape}, b_in {self.b_in.shape}, "
                             f"w_out {self.w_out.shape}, b_out {self.b_out.shape}")

    @property
    def n_in(self) -> int:
        return self.w_in.shape[0]

    @property
    def n_out(self) -> int:
        return self.w_out.shape[1]

    def __call__(self, x) -> np.ndarray:
        x = np.asarray(x)
        if x.shape[-1:] != (self.n_in,):
            raise ValueError(f"x must have {self.n_in} features in its last axis, got shape {x.shape}")
        return np.tanh(x @ self.w_in + self.b_in) @ self.w_out + self.b_out


def random_mlp(*, n_in: int, n_hidden: int, n_out: int, seed: int = 0, scale: float = 1.0) -> MLP:
    """An MLP with Gaussian weights of standard deviation ``scale/√fan_in`` (seeded)."""
    n_in = validate.integer("n_in", n_in, maximum=MAX_WIDTH)
    n_hidden = validate.integer("n_hidden", n_hidden, maximum=MAX_WIDTH)
    n_out = validate.integer("n_out", n_out, maximum=MAX_WIDTH)
    scale = validate.scalar("scale", scale, maximum=1000.0)
    rng = np.random.default_rng(_seed(seed))
    return MLP(w_in=rng.normal(0, scale / np.sqrt(n_in), (n_in, n_hidden)),
               b_in=rng.normal(0, 0.1 * scale, n_hidden),
               w_out=rng.normal(0, scale / np.sqrt(n_hidden), (n_hidden, n_out)),
               b_out=rng.normal(0, 0.1 * scale, n_out))


def to_bits(values: np.ndarray, n_bits: int) -> np.ndarray:
    """Unsigned integers -> their ``n_bits`` lowest bits along a new last axis (bit 0 first)."""
    _array("values", values, kinds="u", what="unsigned integers")
    n_bits = validate.integer("n_bits", n_bits)
    if n_bits > 64:
        raise ValueError(f"n_bits must be <= 64, got {n_bits}")
    shifts = np.arange(n_bits, dtype=np.uint64)
    return ((values.astype(np.uint64)[..., None] >> shifts) & np.uint64(1)).astype(np.uint8)


def from_bits(bits: np.ndarray) -> np.ndarray:
    """The inverse of :func:`to_bits`: bits along the last axis (bit 0 first) -> uint64."""
    bits = _array("bits", bits, kinds="u", what="bits (unsigned integers 0 or 1)")
    if bits.ndim == 0 or bits.shape[-1] > 64 or np.any(bits > 1):
        raise ValueError(f"bits must be 0s and 1s along a last axis of at most 64, got {validate._describe(bits)}")
    shifts = np.arange(bits.shape[-1], dtype=np.uint64)
    return np.bitwise_or.reduce(bits.astype(np.uint64) << shifts, axis=-1)


@dataclass(frozen=True, eq=False)
class BitMLP:
    """An MLP acting on ``n_bits``-bit unsigned integers: bits -> ±1 -> MLP -> signs -> bits.

    Many inputs share an output (it is not a bijection), which is the point: a Feistel block
    built on it is invertible all the same.
    """

    mlp: MLP
    n_bits: int

    def __call__(self, x: np.ndarray) -> np.ndarray:
        _array("x", x, kinds="u", what="unsigned integers")
        signs = 2.0 * to_bits(x, self.n_bits) - 1.0
        return from_bits((self.mlp(signs) > 0).astype(np.uint8)).astype(x.dtype)


def random_bit_mlp(*, n_bits: int = 8, n_hidden: int = 16, seed: int = 0) -> BitMLP:
    """A :class:`BitMLP` with random weights (seeded)."""
    n_bits = validate.integer("n_bits", n_bits)
    if n_bits > 32:
        raise ValueError(f"n_bits must be <= 32, got {n_bits}")
    return BitMLP(random_mlp(n_in=n_bits, n_hidden=n_hidden, n_out=n_bits, seed=seed, scale=2.0), n_bits)


# ================================================================================ 2. a toy cipher

#: The 4-bit S-box of the PRESENT block cipher (Bogdanov et al., CHES 2007, Table 1).
PRESENT_SBOX = np.array([0xC, 0x5, 0x6, 0xB, 0x9, 0x0, 0xA, 0xD, 0x3, 0xE, 0xF, 0x8, 0x4, 0x7, 0x1, 0x2],
                        dtype=np.uint64)
ROUND_FUNCTIONS = ("sbox", "mlp")


def _rotl(x: np.ndarray, r: int, bits: int) -> np.ndarray:
    mask = np.uint64((1 << bits) - 1)
    r %= bits
    return ((x << np.uint64(r)) | (x >> np.uint64(bits - r))) & mask if r else x


@dataclass(frozen=True, eq=False)
class ToyFeistelCipher:
    """A toy Feistel cipher on ``2·half_bits``-bit blocks held in uint64 (NOT secure; for teaching).

    Round i maps halves ``(L, R) -> (R, L ⊕ F(R ⊕ k_i))``. With ``round_function="sbox"``, F runs each
    nibble through PRESENT's S-box, then XORs two rotations of the result into it (a DES-like
    substitution then diffusion). With ``"mlp"``, F is a random :class:`BitMLP`: a randomly
    initialised network used as a cipher's round function (lecture 02:05:58).
    """

    half_bits: int
    round_keys: tuple[int, ...]
    round_function: str = "sbox"
    bit_mlp: BitMLP | None = field(default=None, repr=False)

    def __post_init__(self):
        half_bits = validate.integer("half_bits", self.half_bits, minimum=8, maximum=32)
        if half_bits % 4:
            raise ValueError(f"half_bits must be a multiple of 4 between 8 and 32, got {half_bits}")
        object.__setattr__(self, "half_bits", half_bits)
        keys = self.round_keys
        if not isinstance(keys, (tuple, list)) or not keys:
            raise ValueError(f"round_keys must be a non-empty tuple of whole numbers, got {validate._describe(keys)}")
        object.__setattr__(self, "round_keys", tuple(
            validate.integer("round_keys", key, minimum=0, maximum=(1 << half_bits) - 1) for key in keys))
        validate.choice("round_function", self.round_function, ROUND_FUNCTIONS)
        if self.round_function == "mlp" and not isinstance(self.bit_mlp, BitMLP):
            raise ValueError(f"bit_mlp must be a BitMLP when round_function='mlp', got {validate._describe(self.bit_mlp)}")

    @property
    def rounds(self) -> int:
        return len(self.round_keys)

    @property
    def block_bits(self) -> int:
        return 2 * self.half_bits

    def _f(self, r: np.ndarray, key: int) -> np.ndarray:
        h = self.half_bits
        v = r ^ np.uint64(key)
        if self.round_function == "mlp":
            return self.bit_mlp(v)
        out = np.zeros_like(v)
        for nibble in range(h // 4):
            shift = np.uint64(4 * nibble)
            out |= PRESENT_SBOX[(v >> shift) & np.uint64(0xF)] << shift
        return out ^ _rotl(out, 3, h) ^ _rotl(out, 7, h)

    def _check_blocks(self, blocks) -> np.ndarray:
        _array("blocks", blocks, kinds="u", what="unsigned integers")
        blocks = blocks.astype(np.uint64)
        if self.block_bits < 64 and np.any(blocks >> np.uint64(self.block_bits)):
            raise ValueError(f"blocks must fit in {self.block_bits} bits")
        return blocks

    def _rounds_arg(self, rounds) -> int:
        if rounds is None:
            return self.rounds
        rounds = validate.integer("rounds", rounds, minimum=1)
        if rounds > self.rounds:
            raise ValueError(f"rounds must be between 1 and {self.rounds} (the cipher's rounds), got {rounds}")
        return rounds

    def trace(self, blocks: np.ndarray, rounds: int | None = None) -> np.ndarray:
        """The blocks after 0, 1, ..., ``rounds`` rounds: shape ``(rounds + 1, *blocks.shape)``."""
        blocks = self._check_blocks(blocks)
        rounds = self._rounds_arg(rounds)
        h = np.uint64(self.half_bits)
        mask = np.uint64((1 << self.half_bits) - 1)
        left, right = blocks >> h, blocks & mask
        states = [blocks]
        for key in self.round_keys[:rounds]:
            left, right = right, left ^ self._f(right, key)
            states.append((left << h) | right)
        return np.stack(states)

    def encrypt(self, blocks: np.ndarray, rounds: int | None = None) -> np.ndarray:
        """Encrypt with the first ``rounds`` rounds (all by default)."""
        return self.trace(blocks, rounds)[-1]

    def decrypt(self, blocks: np.ndarray, rounds: int | None = None) -> np.ndarray:
        """Undo :meth:`encrypt`: the same round functions, keys in reverse, never inverting F."""
        blocks = self._check_blocks(blocks)
        rounds = self._rounds_arg(rounds)
        h = np.uint64(self.half_bits)
        mask = np.uint64((1 << self.half_bits) - 1)
        left, right = blocks >> h, blocks & mask
        for key in reversed(self.round_keys[:rounds]):
            left, right = right ^ self._f(left, key), left
        return (left << h) | right


def toy_cipher(*, rounds: int = 16, half_bits: int = 16, round_function: str = "sbox", seed: int = 0
               ) -> ToyFeistelCipher:
    """A :class:`ToyFeistelCipher` with random round keys (seeded). ``half_bits`` in {8, 12, ..., 32}
    (whole nibbles, and wide enough that the two rotations of the round function differ)."""
    rounds = validate.integer("rounds", rounds, minimum=1, maximum=MAX_DEPTH)
    half_bits = validate.integer("half_bits", half_bits, minimum=8)
    if half_bits > 32 or half_bits % 4:
        raise ValueError(f"half_bits must be a multiple of 4 between 8 and 32, got {half_bits}")
    validate.choice("round_function", round_function, ROUND_FUNCTIONS)
    rng = np.random.default_rng(_seed(seed))
    keys = tuple(int(k) for k in rng.integers(0, 1 << half_bits, size=rounds, dtype=np.uint64))
    mlp = random_bit_mlp(n_bits=half_bits, n_hidden=2 * half_bits, seed=seed) if round_function == "mlp" else None
    return ToyFeistelCipher(half_bits, keys, round_function, mlp)


def random_blocks(n_samples: int, block_bits: int, seed: int = 0) -> np.ndarray:
    """``n_samples`` uniformly random ``block_bits``-bit blocks as uint64 (seeded)."""
    n_samples = validate.integer("n_samples", n_samples, maximum=MAX_SAMPLES)
    block_bits = validate.integer("block_bits", block_bits)
    if block_bits > 64:
        raise ValueError(f"block_bits must be <= 64, got {block_bits}")
    rng = np.random.default_rng(_seed(seed))
    top = np.uint64((1 << block_bits) - 1) if block_bits < 64 else np.iinfo(np.uint64).max
    return rng.integers(0, top, size=n_samples, dtype=np.uint64, endpoint=True)


def avalanche_profile(cipher: ToyFeistelCipher, *, bit: int, n_samples: int = 2048, seed: int = 0) -> np.ndarray:
    """P(output bit j flips | input bit ``bit`` flips) after r rounds: shape ``(rounds + 1, block_bits)``.

    Row r is measured over ``n_samples`` random blocks, vectorised. Row 0 is the input itself (a
    single 1 at ``bit``). The strict avalanche criterion asks every entry to approach 1/2.
    """
    if not isinstance(cipher, ToyFeistelCipher):
        raise ValueError(f"cipher must be a ToyFeistelCipher, got {type(cipher).__name__}")
    bit = validate.integer("bit", bit, minimum=0)
    if bit >= cipher.block_bits:
        raise ValueError(f"bit must be between 0 and {cipher.block_bits - 1}, got {bit}")
    _work("n_samples x rounds x block_bits", validate.integer("n_samples", n_samples, maximum=MAX_SAMPLES)
          * cipher.rounds * cipher.block_bits)
    blocks = random_blocks(n_samples, cipher.block_bits, seed)
    flipped = blocks ^ np.uint64(1 << bit)
    difference = cipher.trace(blocks) ^ cipher.trace(flipped)
    return to_bits(difference, cipher.block_bits).mean(axis=1)


def avalanche_curve(cipher: ToyFeistelCipher, *, bit: int, n_samples: int = 2048, seed: int = 0) -> np.ndarray:
    """Fraction of output bits that flip when input ``bit`` flips, after 0..rounds rounds (→ 1/2)."""
    return avalanche_profile(cipher, bit=bit, n_samples=n_samples, seed=seed).mean(axis=1)


def rounds_to_avalanche(curve: np.ndarray, *, threshold: float = 0.45) -> int | None:
    """The first round whose avalanche fraction reaches ``threshold`` (None if none does)."""
    threshold = validate.fraction("threshold", threshold)
    curve = validate.number("curve", curve, allow_zero=True, maximum=1.0)
    if np.ndim(curve) != 1:
        raise ValueError(f"curve must be a 1-D array of fractions (one per round), got {validate._describe(curve)}")
    hits = np.flatnonzero(np.asarray(curve) >= threshold)
    return int(hits[0]) if hits.size else None


def gf2_derivative(f, x: np.ndarray, a: int) -> np.ndarray:
    """The discrete derivative of ``f`` over GF(2) in direction ``a``: ``f(x ⊕ a) ⊕ f(x)``.

    Differential cryptanalysis (Biham and Shamir, 1990) studies how this output difference is
    distributed for a fixed input difference ``a``; a good cipher makes it look uniform.
    """
    _array("x", x, kinds="u", what="unsigned integers")
    a = validate.integer("a", a, minimum=1)
    return f(x ^ x.dtype.type(a)) ^ f(x)


def top_difference_probability(cipher: ToyFeistelCipher, *, input_difference: int, rounds: int,
                               n_samples: int = 4096, seed: int = 0) -> tuple[int, float]:
    """The most frequent output difference for one input difference, and how often it occurs.

    An ideal cipher gives each of the 2^n output differences probability 2^-n; a difference that
    shows up far more often is a *differential*, the handle differential cryptanalysis pulls on.
    """
    if not isinstance(cipher, ToyFeistelCipher):
        raise ValueError(f"cipher must be a ToyFeistelCipher, got {type(cipher).__name__}")
    rounds = validate.integer("rounds", rounds, minimum=1, maximum=cipher.rounds)
    input_difference = validate.integer("input_difference", input_difference)
    if input_difference >= 1 << cipher.block_bits:
        raise ValueError(f"input_difference must fit in {cipher.block_bits} bits, got {input_difference}")
    difference = gf2_derivative(lambda b: cipher.encrypt(b, rounds), random_blocks(n_samples, cipher.block_bits, seed),
                                input_difference)
    values, counts = np.unique(difference, return_counts=True)
    top = int(np.argmax(counts))
    return int(values[top]), float(counts[top] / n_samples)


# ================================================================================ the same test on networks

NETWORK_KINDS = ("residual", "plain")


def _layernorm(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def network_avalanche(*, kind: str = "residual", depth: int = 16, width: int = 32, weight_scale: float = 0.1,
                      bit: int = 0, n_samples: int = 1024, seed: int = 0) -> dict[str, np.ndarray]:
    """The avalanche experiment on a random network: inputs are ±1 "bits", flip one, compare signs.

    ``kind="residual"``: ``x <- x + W₂ tanh(W₁ LN(x))`` with weights of size ``weight_scale/√width``
    (a transformer-style residual stream). ``kind="plain"``: ``x <- tanh(W x)`` with the same scale
    and no skip connection; at ``weight_scale`` well above 1 it is in the chaotic regime.

    Returns, for depths 0..``depth``, ``"flip_fraction"`` (share of output signs that differ: the
    analogue of output bits that flip) and ``"amplification"`` (median of |Δ output| / |Δ input|).
    """
    validate.choice("kind", kind, NETWORK_KINDS)
    depth = validate.integer("depth", depth, maximum=MAX_DEPTH)
    width = validate.integer("width", width, minimum=2, maximum=MAX_WIDTH)
    weight_scale = validate.scalar("weight_scale", weight_scale, maximum=1000.0)
    bit = validate.integer("bit", bit, minimum=0)
    if bit >= width:
        raise ValueError(f"bit must be between 0 and {width - 1}, got {bit}")
    rng = np.random.default_rng(_seed(seed))
    n_samples = validate.integer("n_samples", n_samples, maximum=MAX_SAMPLES)
    _work("n_samples x width^2 x depth", n_samples * width * width * depth)
    x = rng.choice([-1.0, 1.0], size=(n_samples, width))
    x_flip = x.copy()
    x_flip[:, bit] *= -1
    std = weight_scale / np.sqrt(width)
    flips, gains = [np.mean(np.sign(x) != np.sign(x_flip))], [1.0]
    start = np.linalg.norm(x - x_flip, axis=1)
    for _ in range(depth):
        w1, w2 = rng.normal(0, std, (width, width)), rng.normal(0, std, (width, width))
        if kind == "residual":
            x = x + np.tanh(_layernorm(x) @ w1) @ w2
            x_flip = x_flip + np.tanh(_layernorm(x_flip) @ w1) @ w2
        else:
            x, x_flip = np.tanh(x @ w1), np.tanh(x_flip @ w1)
        flips.append(np.mean(np.sign(x) != np.sign(x_flip)))
        gains.append(float(np.median(np.linalg.norm(x - x_flip, axis=1) / start)))
    return {"flip_fraction": np.array(flips), "amplification": np.array(gains)}


# ================================================================================ 3. RevNets

BLOCK_PARAMS = ("gain", "bias", "w_in", "b_in", "w_out", "b_out")
_GELU_C = float(np.sqrt(2 / np.pi))   # a Python float, so it keeps the arrays' dtype


def _gelu(h):
    inner = _GELU_C * (h + 0.044715 * h ** 3)
    t = np.tanh(inner)
    return 0.5 * h * (1 + t), t


def _gelu_grad(h, t):
    d_inner = _GELU_C * (1 + 3 * 0.044715 * h ** 2)
    return 0.5 * (1 + t) + 0.5 * h * (1 - t ** 2) * d_inner


def _check_block(params, **arrays) -> None:
    """``params`` a dict of float arrays keyed by :data:`BLOCK_PARAMS`; each named array a finite float
    array whose last axis is the block's width."""
    if not isinstance(params, dict) or set(params) != set(BLOCK_PARAMS):
        raise ValueError(f"params must be a dict with keys {list(BLOCK_PARAMS)}, got {validate._describe(params)}")
    for key in BLOCK_PARAMS:
        _array(f"params[{key!r}]", params[key], kinds="f", what="floats")
    width = params["gain"].shape[-1]
    for name, value in arrays.items():
        _array(name, value, kinds="f", what="floats")
        if value.ndim < 1 or value.shape[-1] != (params["w_out"].shape[-1] if name == "d_out" else width):
            raise ValueError(f"{name} must have {width} features in its last axis, got shape {value.shape}")
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{name} must be finite")


_CACHE_KEYS = ("x_hat", "inv_std", "u", "h", "t", "a")


def block_forward(params: dict, x: np.ndarray, *, eps: float = 1e-5) -> tuple[np.ndarray, dict]:
    """A transformer-style sub-block ``MLP(LayerNorm(x))`` (no residual: the coupling adds that).

    ``LN(x) = gain·(x - mean)/√(var + eps) + bias``; ``MLP(u) = GELU(u W_in + b_in) W_out + b_out``
    (GELU in its tanh form). Returns the output and the cache a backward pass needs.
    """
    _check_block(params, x=x)
    eps = validate.scalar("eps", eps, maximum=1.0)
    mean = x.mean(axis=-1, keepdims=True)
    inv_std = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - mean) * inv_std
    u = params["gain"] * x_hat + params["bias"]
    h = u @ params["w_in"] + params["b_in"]
    a, t = _gelu(h)
    out = a @ params["w_out"] + params["b_out"]
    return out, {"x_hat": x_hat, "inv_std": inv_std, "u": u, "h": h, "t": t, "a": a}


def block_backward(params: dict, cache: dict, d_out: np.ndarray) -> tuple[np.ndarray, dict]:
    """Backpropagate ``d_out`` through :func:`block_forward`: returns ``(d_x, d_params)``."""
    _check_block(params, d_out=d_out)
    if not isinstance(cache, dict) or not set(_CACHE_KEYS) <= set(cache):
        raise ValueError(f"cache must be the dict block_forward returned, got {validate._describe(cache)}")
    if cache["a"].shape[:-1] != d_out.shape[:-1]:
        raise ValueError(f"d_out must match the cached batch shape {cache['a'].shape[:-1]}, got {d_out.shape}")
    grads = {"w_out": cache["a"].reshape(-1, cache["a"].shape[-1]).T @ d_out.reshape(-1, d_out.shape[-1]),
             "b_out": d_out.reshape(-1, d_out.shape[-1]).sum(axis=0)}
    d_h = (d_out @ params["w_out"].T) * _gelu_grad(cache["h"], cache["t"])
    grads["w_in"] = cache["u"].reshape(-1, cache["u"].shape[-1]).T @ d_h.reshape(-1, d_h.shape[-1])
    grads["b_in"] = d_h.reshape(-1, d_h.shape[-1]).sum(axis=0)
    d_u = d_h @ params["w_in"].T
    grads["gain"] = (d_u * cache["x_hat"]).reshape(-1, d_u.shape[-1]).sum(axis=0)
    grads["bias"] = d_u.reshape(-1, d_u.shape[-1]).sum(axis=0)
    d_xhat = d_u * params["gain"]
    x_hat = cache["x_hat"]
    d_x = cache["inv_std"] * (d_xhat - d_xhat.mean(axis=-1, keepdims=True)
                              - x_hat * (d_xhat * x_hat).mean(axis=-1, keepdims=True))
    return d_x, grads


def cache_bytes(cache: dict) -> int:
    """Bytes held by one block's cache (the activations standard backprop keeps)."""
    if not isinstance(cache, dict) or not cache or not all(isinstance(v, np.ndarray) for v in cache.values()):
        raise ValueError(f"cache must be a dict of NumPy arrays (from block_forward), got {validate._describe(cache)}")
    return int(sum(value.nbytes for value in cache.values()))


@dataclass(frozen=True, eq=False)
class RevNet:
    """A stack of reversible couplings (Gomez et al. 2017, eq. 1), each with two sub-blocks F and G:

    ``y₁ = x₁ + F(x₂)``, ``y₂ = x₂ + G(y₁)``; inverse ``x₂ = y₂ - G(y₁)``, ``x₁ = y₁ - F(x₂)``.

    The lecture's form (E7.2) ``x_out = y + f(x), y_out = x`` is one half of this coupling with the
    streams swapped: two Feistel rounds per layer. ``f_params[i]`` and ``g_params[i]`` hold layer
    i's parameters (dicts keyed by :data:`BLOCK_PARAMS`).
    """

    f_params: tuple[dict, ...]
    g_params: tuple[dict, ...]

    @property
    def n_layers(self) -> int:
        return len(self.f_params)

    @property
    def width(self) -> int:
        return self.f_params[0]["w_in"].shape[0]


def random_revnet(*, n_layers: int = 4, width: int = 8, hidden: int = 16, seed: int = 0,
                  weight_scale: float = 0.5, dtype=np.float64) -> RevNet:
    """A :class:`RevNet` of ``n_layers`` couplings on two streams of ``width`` features (seeded).

    ``dtype`` (float16, float32 or float64) is the parameters' precision; with inputs of the same
    dtype the whole forward and inverse run in it, which shows how reconstruction drifts.
    """
    n_layers = validate.integer("n_layers", n_layers, maximum=MAX_DEPTH)
    width = validate.integer("width", width, minimum=2, maximum=MAX_WIDTH)
    hidden = validate.integer("hidden", hidden, maximum=MAX_WIDTH)
    _work("n_layers x width x hidden", n_layers * width * hidden)
    weight_scale = validate.scalar("weight_scale", weight_scale, maximum=1000.0)
    try:
        chosen = None if dtype is None else np.dtype(dtype)
    except TypeError:
        chosen = None
    if chosen not in (np.float16, np.float32, np.float64):
        raise ValueError(f"dtype must be float16, float32 or float64, got {dtype!r}")
    dtype = chosen
    rng = np.random.default_rng(_seed(seed))

    def block():
        params = {"gain": 1 + 0.1 * rng.normal(size=width), "bias": 0.1 * rng.normal(size=width),
                  "w_in": rng.normal(0, weight_scale / np.sqrt(width), (width, hidden)),
                  "b_in": 0.1 * rng.normal(size=hidden),
                  "w_out": rng.normal(0, weight_scale / np.sqrt(hidden), (hidden, width)),
                  "b_out": 0.1 * rng.normal(size=width)}
        return {name: value.astype(dtype) for name, value in params.items()}

    layers = [(block(), block()) for _ in range(n_layers)]
    return RevNet(tuple(f for f, _ in layers), tuple(g for _, g in layers))


def _check_streams(net, a, b, names):
    if not isinstance(net, RevNet):
        raise ValueError(f"net must be a RevNet, got {type(net).__name__}")
    for name, value in zip(names, (a, b)):
        _array(name, value, kinds="f", what="floats")
        if value.ndim < 1 or value.shape[-1] != net.width:
            raise ValueError(f"{name} must have {net.width} features in its last axis, got shape {value.shape}")
    if a.shape != b.shape:
        raise ValueError(f"{names[0]} and {names[1]} must have the same shape, got {a.shape} and {b.shape}")


def revnet_forward(net: RevNet, x1: np.ndarray, x2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Run every coupling forward: ``y₁ = x₁ + F(x₂)``, ``y₂ = x₂ + G(y₁)`` (Gomez et al. eq. 1)."""
    _check_streams(net, x1, x2, ("x1", "x2"))
    for f, g in zip(net.f_params, net.g_params):
        x1 = x1 + block_forward(f, x2)[0]
        x2 = x2 + block_forward(g, x1)[0]
    return x1, x2


def revnet_inverse(net: RevNet, y1: np.ndarray, y2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rebuild the inputs from the outputs, last layer first: ``x₂ = y₂ - G(y₁)``, ``x₁ = y₁ - F(x₂)``."""
    _check_streams(net, y1, y2, ("y1", "y2"))
    for f, g in zip(reversed(net.f_params), reversed(net.g_params)):
        y2 = y2 - block_forward(g, y1)[0]
        y1 = y1 - block_forward(f, y2)[0]
    return y1, y2


@dataclass(frozen=True, eq=False)
class Backprop:
    """What a backward pass returns: input gradients, parameter gradients per layer, the inputs it
    reconstructed (reversible only) and the peak bytes of activations it held."""

    d_x1: np.ndarray
    d_x2: np.ndarray
    d_f: tuple[dict, ...]
    d_g: tuple[dict, ...]
    x1: np.ndarray
    x2: np.ndarray
    activation_bytes: int
    method: str


def revnet_backward(net: RevNet, x1: np.ndarray, x2: np.ndarray, d_y1: np.ndarray, d_y2: np.ndarray, *,
                    method: str = "reversible") -> Backprop:
    """Gradients of ``sum(d_y1·y1 + d_y2·y2)`` (the vector-Jacobian product) by hand, two ways.

    ``method="stored"``: ordinary backprop. The forward pass keeps every layer's cache (activation
    memory grows with depth); the backward pass reads them in reverse.

    ``method="reversible"``: the forward pass keeps only the final outputs. The backward pass walks
    the layers in reverse and, in lockstep, rebuilds each layer's input from its output and
    recomputes that layer's cache (Gomez et al. 2017, Algorithm 1; lecture 02:12:55):
    ``z₁ = y₁``; ``x₂ = y₂ - G(z₁)``; ``d z₁ = d y₁ + (∂G/∂z₁)ᵀ d y₂``; ``x₁ = z₁ - F(x₂)``;
    ``d x₂ = d y₂ + (∂F/∂x₂)ᵀ d z₁``; ``d x₁ = d z₁``. Memory stays one layer's worth.
    """
    validate.choice("method", method, ("reversible", "stored"))
    _check_streams(net, x1, x2, ("x1", "x2"))
    _check_streams(net, d_y1, d_y2, ("d_y1", "d_y2"))
    if d_y1.shape != x1.shape:
        raise ValueError(f"d_y1 must have the outputs' shape {x1.shape}, got {d_y1.shape}")
    d_f, d_g = [None] * net.n_layers, [None] * net.n_layers
    if method == "stored":
        caches, a, b = [], x1, x2
        for f, g in zip(net.f_params, net.g_params):
            out_f, cache_f = block_forward(f, b)
            a = a + out_f
            out_g, cache_g = block_forward(g, a)
            b = b + out_g
            caches.append((cache_f, cache_g))
        held = sum(cache_bytes(cf) + cache_bytes(cg) for cf, cg in caches) + a.nbytes + b.nbytes
        for i in reversed(range(net.n_layers)):
            cache_f, cache_g = caches[i]
            d_z1_from_g, d_g[i] = block_backward(net.g_params[i], cache_g, d_y2)
            d_y1 = d_y1 + d_z1_from_g
            d_x2_from_f, d_f[i] = block_backward(net.f_params[i], cache_f, d_y1)
            d_y2 = d_y2 + d_x2_from_f
        return Backprop(d_y1, d_y2, tuple(d_f), tuple(d_g), x1, x2, int(held), method)
    y1, y2 = revnet_forward(net, x1, x2)
    held = 0
    for i in reversed(range(net.n_layers)):
        out_g, cache_g = block_forward(net.g_params[i], y1)
        y2 = y2 - out_g                                   # x₂ of layer i, rebuilt
        d_z1_from_g, d_g[i] = block_backward(net.g_params[i], cache_g, d_y2)
        d_y1 = d_y1 + d_z1_from_g
        out_f, cache_f = block_forward(net.f_params[i], y2)
        y1 = y1 - out_f                                   # x₁ of layer i, rebuilt
        d_x2_from_f, d_f[i] = block_backward(net.f_params[i], cache_f, d_y1)
        d_y2 = d_y2 + d_x2_from_f
        held = max(held, cache_bytes(cache_g) + cache_bytes(cache_f) + 2 * y1.nbytes)
    return Backprop(d_y1, d_y2, tuple(d_f), tuple(d_g), y1, y2, int(held), method)


def revnet_objective(net: RevNet, x1, x2, d_y1, d_y2) -> float:
    """``sum(d_y1·y1 + d_y2·y2)``: the scalar whose gradient :func:`revnet_backward` computes."""
    _check_streams(net, d_y1, d_y2, ("d_y1", "d_y2"))
    if np.shape(d_y1) != np.shape(x1):
        raise ValueError(f"d_y1 must have the shape of x1, {np.shape(x1)}, got {np.shape(d_y1)}")
    for name, value in (("d_y1", d_y1), ("d_y2", d_y2)):
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{name} must be finite")
    y1, y2 = revnet_forward(net, x1, x2)
    return float(np.sum(d_y1 * y1) + np.sum(d_y2 * y2))


def finite_difference(net: RevNet, x1, x2, d_y1, d_y2, *, layer: int, block: str, name: str, index: tuple,
                      step: float = 1e-6) -> float:
    """A central finite difference of :func:`revnet_objective` in one parameter entry."""
    if not isinstance(net, RevNet):
        raise ValueError(f"net must be a RevNet, got {type(net).__name__}")
    validate.choice("block", block, ("f", "g"))
    validate.choice("name", name, BLOCK_PARAMS)
    layer = validate.integer("layer", layer, minimum=0)
    if layer >= net.n_layers:
        raise ValueError(f"layer must be between 0 and {net.n_layers - 1}, got {layer}")
    step = validate.scalar("step", step, maximum=1.0)
    params = (net.f_params if block == "f" else net.g_params)[layer][name]
    if (not isinstance(index, tuple) or len(index) != params.ndim
            or not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) and 0 <= i < n
                       for i, n in zip(index, params.shape))):
        raise ValueError(f"index must be a tuple of {params.ndim} whole numbers within {params.shape}, "
                         f"got {validate._describe(index)}")
    revnet_objective(net, x1, x2, d_y1, d_y2)   # checks the streams before any parameter moves
    original = params[index]
    try:
        params[index] = original + step
        up = revnet_objective(net, x1, x2, d_y1, d_y2)
        params[index] = original - step
        down = revnet_objective(net, x1, x2, d_y1, d_y2)
    finally:
        params[index] = original
    return (up - down) / (2 * step)


# ================================================================================ 4. the memory/compute trades

#: Activation values stored per token per layer, in units of d_model, in bf16 training without
#: rematerialisation: "about 2·20·B·T·D·L bytes" (How to Scale Your Model, "All the Transformer Math
#: You Need to Know", section on rematerialisation; jax-ml.github.io/scaling-book, read 2026-11).
ACTIVATION_VALUES_PER_LAYER = 20

_TOKENS = B * len_seq

ACT_STANDARD = Formula(
    m_act, n_layers * _TOKENS * act_values * d_model * bytes_value,
    source="lecture 02:12:21 (E7.3): every layer's activations stay in HBM until the backward pass")
ACT_CHECKPOINT = Formula(
    m_act, (n_layers / k_seg) * _TOKENS * d_model * bytes_value + k_seg * _TOKENS * act_values * d_model * bytes_value,
    source="Chen et al. 2016 (arXiv 1604.06174): keep a layer input every k layers, re-run one k-layer "
           "segment at a time")
_K_BEST = solve(sp.Eq(sp.diff(ACT_CHECKPOINT.rhs, k_seg), 0), k_seg)[0]
K_SEGMENT_BEST = Formula(k_seg, _K_BEST, source="d M_act / d k = 0 on ACT_CHECKPOINT")
ACT_CHECKPOINT_BEST = Formula(m_act, simplify(ACT_CHECKPOINT.rhs.subs(k_seg, _K_BEST)),
                              source="ACT_CHECKPOINT at its best k: grows as √L (Chen et al. 2016)")
ACT_REVERSIBLE = Formula(
    m_act, _TOKENS * (2 + act_values) * d_model * bytes_value,
    source="lecture 02:12:55 and Gomez et al. 2017: only the two output streams (width D each) plus one "
           "layer's working set, whatever the depth")
CROSSING_DEPTH = Formula(
    L_cross, solve(sp.Eq(ACT_CHECKPOINT_BEST.rhs, ACT_REVERSIBLE.rhs), n_layers)[0],
    source="ACT_CHECKPOINT_BEST = ACT_REVERSIBLE solved for L: below this depth best checkpointing holds less "
           "than a reversible network (about 6 layers at c_act = 20)")

FLOPS_STANDARD = Formula(flops_train, 6 * N_active,
                         source="2 FLOPs per parameter forward + 4 backward (lecture notes, Chapter 5)")
FLOPS_RECOMPUTE = Formula(flops_train, FLOPS_STANDARD.rhs + 2 * N_active,
                          source="one extra forward pass (checkpointing re-runs each segment; a RevNet "
                                 "re-runs F and G to invert them): 8·N per token")

T_KV_RECOMPUTE = Formula(t_kv_recompute, 2 * N_active / FLOPs,
                         source="lecture 01:50:07 (E6.6): rematerialising a token's KV is a forward pass")
T_KV_READ = Formula(t_kv_read, bytes_tok / mem_bw, source="lecture 01:57:51 (E6.6): read it back from HBM")
KV_ADVANTAGE = Formula(kv_advantage, T_KV_RECOMPUTE.rhs / T_KV_READ.rhs,
                       source="lecture 02:13:27: storing KV 'is generally profitable given where hardwares are'")
RATE_KV = Formula(rate_kv, 2 * N_active / bytes_tok,
                  source="KV cache: FLOPs saved per byte of KV kept (lecture 02:13:11)")

# Issue 49 §5: a reversible network does not replace the KV cache. Decoding a token at layer l needs the keys and
# values of every EARLIER token at layer l, which are projections of those tokens' layer-l inputs. Inverting a layer
# rebuilds its inputs from its outputs, for all tokens at once (attention mixes them), so without a cache the earlier
# tokens' inputs must be rebuilt at every decode step: one inverse pass (a forward pass's FLOPs) per earlier token.
FLOPS_DECODE_CACHED = Formula(flops_decode, 2 * N_active,
                              source="lecture E6.4: a decode token with a KV cache, weight FLOPs only "
                                     "(attention's own FLOPs, E6.5, are the same either way and left out)")
FLOPS_DECODE_REVERSIBLE = Formula(flops_decode, 2 * N_active * (1 + len_ctx),
                                  source="course, from lecture 02:10:36-02:13:27: the new token's forward pass plus "
                                         "an inversion of every layer for each of the len_ctx earlier tokens",
                                  note="the same FLOPs as recomputing the cache from token IDs (E6.6's remat row) "
                                       "every step, so reversibility buys nothing here; it would also have to keep "
                                       "each earlier token's two top-layer streams")
RATE_REV = Formula(rate_rev, simplify((FLOPS_RECOMPUTE.rhs - FLOPS_STANDARD.rhs)
                                         / ((ACT_STANDARD.rhs - ACT_REVERSIBLE.rhs) / _TOKENS)),
                   source="RevNet: extra FLOPs spent per byte of activation memory saved (lecture 02:13:11)",
                   domain=simplify((ACT_STANDARD.rhs - ACT_REVERSIBLE.rhs) / _TOKENS) > 0)

STRATEGIES = ("standard", "checkpoint", "reversible")
BYTES_PER_ACTIVATION = {"fp32": 4.0, "bf16": 2.0, "fp8": 1.0}


def memory_timeline(*, strategy: str, n_layers: int, k_seg: int | None = None,
                    values_per_layer: float = ACTIVATION_VALUES_PER_LAYER) -> dict[str, np.ndarray]:
    """Activation memory held at each step of one training step: the lecture's drawing (02:12:21).

    One step is one layer's forward, recompute or backward. Memory is in units of one layer's full
    activations (c_act·d_model values per token); a stored layer input is 1/c_act of a unit.

    - ``"standard"``: forward step t holds t units; backward through layer l holds l units (2L steps).
    - ``"checkpoint"``: keep one layer input every ``k_seg`` layers (default: the nearest whole
      number to √(L/c_act), at least 1); each segment is recomputed, then backpropagated (3L steps).
    - ``"reversible"``: the two streams (2/c_act) plus one layer's working set; each layer is rebuilt
      (recompute) then backpropagated, in lockstep (3L steps).

    Returns ``{"phase": array of "forward"/"recompute"/"backward", "layer": 1-based layer, "held": units}``.
    """
    validate.choice("strategy", strategy, STRATEGIES)
    n_layers = validate.integer("n_layers", n_layers, maximum=MAX_DEPTH)
    c = validate.scalar("values_per_layer", values_per_layer, maximum=1000.0)
    if c < 1:
        raise ValueError(f"values_per_layer must be >= 1 (a layer keeps at least its input), got {values_per_layer!r}")
    if k_seg is None:
        k_seg = max(1, round(float(np.sqrt(n_layers / c))))
    k_seg = validate.integer("k_seg", k_seg)
    steps: list[tuple[str, int, float]] = []
    if strategy == "standard":
        steps += [("forward", layer, float(layer)) for layer in range(1, n_layers + 1)]
        steps += [("backward", layer, float(layer)) for layer in range(n_layers, 0, -1)]
    elif strategy == "reversible":
        held = 1 + 2 / c
        steps += [("forward", layer, held) for layer in range(1, n_layers + 1)]
        for layer in range(n_layers, 0, -1):
            steps += [("recompute", layer, held), ("backward", layer, held)]
    else:
        starts = list(range(1, n_layers + 1, k_seg))
        steps += [("forward", layer, (starts.index(max(s for s in starts if s <= layer)) + 1) / c + 1)
                  for layer in range(1, n_layers + 1)]
        for index in reversed(range(len(starts))):
            first, last = starts[index], min(starts[index] + k_seg - 1, n_layers)
            kept = (index + 1) / c
            steps += [("recompute", layer, kept + layer - first + 1) for layer in range(first, last + 1)]
            steps += [("backward", layer, kept + layer - first + 1) for layer in range(last, first - 1, -1)]
    phase, layer, held = zip(*steps)
    return {"phase": np.array(phase), "layer": np.array(layer), "held": np.array(held)}


@validate.reports_inputs
def activation_memory(*, strategy: str, n_layers, d_model, len_seq, bytes_per_value: float = 2.0,
                      batch=1, values_per_layer: float = ACTIVATION_VALUES_PER_LAYER):
    """Activation bytes held for one training step of ``batch`` sequences of ``len_seq`` tokens.

    ``"standard"``: L·T·c·D·bytes (∝ L). ``"checkpoint"``: at the best segment length,
    2·T·D·bytes·√(L·c) (∝ √L). ``"reversible"``: T·(2 + c)·D·bytes (constant in L). T = batch ×
    len_seq, c = ``values_per_layer`` (about 20, scaling book). Numbers or arrays, broadcast.
    """
    validate.choice("strategy", strategy, STRATEGIES)
    n_layers, d_model, len_seq, bytes_per_value, batch, values_per_layer = (
        validate.number(name, value) for name, value in dict(
            n_layers=n_layers, d_model=d_model, len_seq=len_seq, bytes_per_value=bytes_per_value, batch=batch,
            values_per_layer=values_per_layer).items())
    inputs = dict(n_layers=n_layers, d_model=d_model, len_seq=len_seq, bytes_value=bytes_per_value, B=batch,
                  act_values=values_per_layer)
    formula = {"standard": ACT_STANDARD, "checkpoint": ACT_CHECKPOINT_BEST, "reversible": ACT_REVERSIBLE}[strategy]
    try:
        return formula(**{k: v for k, v in inputs.items() if k in formula.input_names},
                       called_as={k: v for k, v in (("bytes_value", "bytes_per_value"), ("act_values", "values_per_layer"),
                                                    ("B", "batch")) if k in formula.input_names})
    except ValueError as error:   # name the public parameter, not the symbol
        message = str(error).replace("bytes_value", "bytes_per_value").replace("act_values", "values_per_layer")
        raise ValueError(message.replace("B must", "batch must")) from None


@validate.reports_inputs
def training_flops_per_token(*, strategy: str, n_active) -> float:
    """Training FLOPs per token: 6·N for standard training, 8·N with checkpointing or RevNets."""
    validate.choice("strategy", strategy, STRATEGIES)
    n_active = validate.number("n_active", n_active)
    formula = FLOPS_STANDARD if strategy == "standard" else FLOPS_RECOMPUTE
    return formula(N_active=n_active, called_as={"N_active": "n_active"})


def kv_trade(model, chip, *, kv_format: str = "fp8", compute_format: str = "fp8") -> dict[str, float]:
    """Recompute a token's KV (FLOPs, seconds) or store it (bytes, seconds to read back)?

    ``model`` is a :class:`lecture_lib.models.Model`, ``chip`` a :class:`lecture_lib.hardware.Chip`.
    Returns ``flops`` (2·N_active), ``bytes`` (``model.kv_bytes_per_token(kv_format)``),
    ``t_recompute``, ``t_read`` and ``advantage`` = t_recompute / t_read, which equals Chapter 1's
    Goldilocks context.
    """
    from . import hardware, models

    model, chip = models.resolve(model), hardware.resolve_chip(chip)
    validate.choice("kv_format", kv_format, sorted(BYTES_PER_ACTIVATION) + ["fp4"])
    if not isinstance(compute_format, str) or compute_format not in chip.flops:
        raise ValueError(f"compute_format must be one of {list(chip.flops)} for {chip.name}, got {compute_format!r}")
    kv_bytes = model.kv_bytes_per_token(kv_format)
    inputs = dict(N_active=model.params_active, FLOPs=chip.flops[compute_format])
    read = dict(bytes_tok=kv_bytes, mem_bw=chip.hbm_bandwidth)
    return {"flops": 2.0 * model.params_active, "bytes": kv_bytes,
            "t_recompute": T_KV_RECOMPUTE(**inputs), "t_read": T_KV_READ(**read),
            "advantage": KV_ADVANTAGE(**inputs, **read), "flops_per_byte": RATE_KV(N_active=model.params_active,
                                                                                  bytes_tok=kv_bytes)}


@validate.reports_inputs
def reversible_trade(model, *, len_seq, bytes_per_value: float = 2.0, batch=1,
                     values_per_layer: float = ACTIVATION_VALUES_PER_LAYER) -> dict[str, float]:
    """The RevNet side of the trade for a preset: bytes saved against FLOPs spent, per token."""
    from . import models

    model = models.resolve(model)
    common = dict(n_layers=model.n_layers, d_model=model.d_model, len_seq=len_seq, bytes_per_value=bytes_per_value,
                  batch=batch, values_per_layer=values_per_layer)
    memory = {s: activation_memory(strategy=s, **common) for s in STRATEGIES}
    return {**{f"memory_{s}": memory[s] for s in STRATEGIES},
            "extra_flops_per_token": FLOPS_RECOMPUTE(N_active=model.params_active)
            - FLOPS_STANDARD(N_active=model.params_active),
            "flops_per_byte": RATE_REV(N_active=model.params_active, n_layers=model.n_layers, d_model=model.d_model,
                                       act_values=values_per_layer, bytes_value=bytes_per_value,
                                       called_as={"act_values": "values_per_layer", "bytes_value": "bytes_per_value"})}
