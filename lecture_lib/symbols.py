"""The notation table: every symbol the course uses, with its meaning and unit.

One SymPy symbol per quantity, shared by all chapters, so that formulas from different chapters
combine without renaming. Names follow the lecture's board (lecture notes §0); ``latex`` is how the
symbol is typeset. All symbols are positive reals, which lets SymPy simplify and solve cleanly.

Units are SI: seconds, bytes, FLOP/s (2 FLOPs per multiply-add), bytes/s, dollars.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy as sp


@dataclass(frozen=True)
class Notation:
    """One row of the notation table."""

    symbol: sp.Symbol
    latex: str
    meaning: str
    unit: str
    chapter: int

    @property
    def name(self) -> str:
        return self.symbol.name


TABLE: dict[str, Notation] = {}


def _define(name: str, latex: str, meaning: str, unit: str, chapter: int = 1) -> sp.Symbol:
    if name in TABLE:
        raise ValueError(f"symbol {name!r} is defined twice in the notation table")
    symbol = sp.Symbol(name, positive=True, real=True)
    TABLE[name] = Notation(symbol, latex, meaning, unit, chapter)
    return symbol

# --- Chapter 1: batch size, cost and speed (lecture 00:00:00-00:32:09) -------------------------
t = _define("t", r"t", "time of one forward pass: one decode step for the whole batch", "s")
t_compute = _define("t_compute", r"t_\mathrm{compute}", "time the matrix units need for the step", "s")
t_weights = _define("t_weights", r"t_\mathrm{weights}", "time to stream every weight from HBM once", "s")
t_kv = _define("t_kv", r"t_\mathrm{KV}", "time to stream the batch's KV cache from HBM", "s")
t_mem = _define("t_mem", r"t_\mathrm{mem}", "memory time: weight fetch plus KV fetch", "s")
B = _define("B", r"B", "batch: sequences decoded together, each gaining one token per step", "sequences")
N_active = _define("N_active", r"N_\mathrm{active}", "parameters touched per token", "params")
N_total = _define("N_total", r"N_\mathrm{total}", "all parameters (all must be read each step)", "params")
FLOPs = _define("FLOPs", r"\mathrm{FLOPs}", "compute throughput of the chips in use (2 FLOPs per multiply-add)", "FLOP/s")
mem_bw = _define("mem_bw", r"\mathrm{mem\_bw}", "HBM bandwidth of the chips in use", "bytes/s")
bytes_param = _define("bytes_param", r"\mathrm{bytes}_\mathrm{param}", "bytes per stored weight (2 bf16, 1 fp8, 0.5 fp4)", "bytes")
len_ctx = _define("len_ctx", r"\mathrm{len}_\mathrm{ctx}", "context length: tokens already in each sequence's KV cache", "tokens")
bytes_tok = _define("bytes_tok", r"\mathrm{bytes}_\mathrm{tok}", "KV-cache bytes per token of context, all layers", "bytes")
sparsity = _define("sparsity", r"\mathrm{sparsity}", "N_total / N_active (>= 1; 8 in the lecture's DeepSeek example)", "-")
ratio_hw = _define("ratio_hw", r"R_\mathrm{hw}", "hardware ratio: multiplies/s x bytes per weight / (bytes/s); about 300", "-")
n_chips = _define("n_chips", r"n_\mathrm{chips}", "chips (GPUs) rented for the step", "chips")
price_chip_hour = _define("price_chip_hour", r"p_\mathrm{chip}", "rental price of one chip for one hour", "$/chip-hour")
hbm_capacity = _define("hbm_capacity", r"C_\mathrm{HBM}", "HBM capacity of the chips in use", "bytes")
t_wait = _define("t_wait", r"t_\mathrm{wait}", "time a request waits for the next batch to depart", "s")
t_step = _define("t_step", r"t_\mathrm{step}", "time between batch departures (one decode step)", "s")

mults = _define("mults", r"\mathrm{FLOPs}_\mathrm{board}", "the board's 'FLOPs': multiplies per second (= FLOP/s / 2)", "multiplies/s")
mfu = _define("mfu", r"\mathrm{MFU}", "model FLOPs utilisation: t_compute / t", "-")
len_ctx_star = _define("len_ctx_star", r"\mathrm{len}^{*}_\mathrm{ctx}", "Goldilocks context: KV slope equals compute slope", "tokens")
B_star = _define("B_star", r"B^{*}", "balance batch: weight-fetch time equals compute time", "sequences")
throughput = _define("throughput", r"\mathrm{tokens/s}", "tokens produced per second by one serving unit", "tokens/s")
cost_token = _define("cost_token", r"\$/\mathrm{token}", "rental cost per generated token", "$")
t_drain = _define("t_drain", r"t_\mathrm{drain}", "time to read all of HBM once: capacity / bandwidth", "s")
t_worst = _define("t_worst", r"t_\mathrm{worst}", "worst-case latency of the fixed-cadence batch 'train'", "s")
price_ratio = _define("price_ratio", r"r_\mathrm{price}", "fast-mode price per token / normal price per token", "-")
speed_ratio = _define("speed_ratio", r"r_\mathrm{speed}", "fast-mode tokens/s per sequence / normal", "-")
batch_ratio = _define("batch_ratio", r"B_\mathrm{normal}/B_\mathrm{fast}", "how many times smaller the fast-mode batch is", "-")

# --- Chapter 2: MoE across racks (lecture_lib.moe) ---
d_model = _define("d_model", r"d_\mathrm{model}", "model width: values in one token's residual-stream vector", "values", 2)
n_experts = _define("n_experts", r"n_\mathrm{experts}", "routed experts in one MoE layer", "experts", 2)
k_active = _define("k_active", r"k", "routed experts each token is sent to (the router's top-k)", "experts", 2)
n_ep = _define("n_ep", r"E", "expert-parallel degree: GPUs one MoE layer's experts are spread over", "GPUs", 2)
experts_per_gpu = _define("experts_per_gpu", r"n_\mathrm{experts/GPU}", "experts each GPU holds", "experts", 2)
bytes_value = _define("bytes_value", r"\mathrm{bytes}_\mathrm{value}", "bytes per activation value sent between GPUs (1 fp8, 2 bf16)", "bytes", 2)
bytes_a2a = _define("bytes_a2a", r"\mathrm{bytes}_\mathrm{a2a}", "bytes one token moves per MoE layer: dispatch plus combine", "bytes", 2)
n_racks = _define("n_racks", r"R", "racks one MoE layer is spread over", "racks", 2)
gpus_per_rack = _define("gpus_per_rack", r"G", "expert-holding GPUs in each rack", "GPUs", 2)
f_cross = _define("f_cross", r"f_\mathrm{cross}", "fraction of dispatch and combine traffic that leaves its rack", "-", 2)
bw_up = _define("bw_up", r"W_\mathrm{up}", "scale-up (NVLink, ICI) bandwidth per GPU, one direction", "bytes/s", 2)
bw_out = _define("bw_out", r"W_\mathrm{out}", "scale-out (NIC, DCN) bandwidth per GPU, one direction", "bytes/s", 2)
link_ratio = _define("link_ratio", r"r_\mathrm{link}", "how many times faster scale-up is than scale-out (board: about 8)", "-", 2)
tokens_gpu = _define("tokens_gpu", r"b_\mathrm{GPU}", "tokens each GPU's router sends out per step (batch / E)", "tokens", 2)
t_a2a_in = _define("t_a2a_in", r"t_\mathrm{a2a,in}", "time for the traffic that stays inside the rack (scale-up)", "s", 2)
t_a2a_cross = _define("t_a2a_cross", r"t_\mathrm{a2a,cross}", "time for the traffic that crosses racks (scale-out)", "s", 2)
t_a2a = _define("t_a2a", r"t_\mathrm{a2a}", "all-to-all time of one MoE layer (dispatch plus combine)", "s", 2)
slowdown_a2a = _define("slowdown_a2a", r"t_\mathrm{a2a}(R)/t_\mathrm{a2a}(1)", "all-to-all time over R racks / time inside one rack", "-", 2)
N_expert = _define("N_expert", r"N_\mathrm{expert}", "parameters of one expert MLP", "params", 2)
t_experts = _define("t_experts", r"t_\mathrm{experts}", "time each GPU's experts compute per MoE layer", "s", 2)
N_fit = _define("N_fit", r"N_\mathrm{fit}", "largest total parameter count whose weights fit in the scale-up domain", "params", 2)
weight_share = _define("weight_share", r"s_\mathrm{weights}", "share of HBM given to weights (the rest holds KV cache)", "-", 2)

# --- Chapter 3: pipeline parallelism (lecture_lib.pipeline) ---
# Also used here (same symbols): k_active, bw_up, bw_out, link_ratio from Chapter 2.
P = _define("P", r"P", "pipeline stages (racks), each holding 1/P of the layers", "stages", 3)
n_micro = _define("n_micro", r"m", "micro-batches per training step (or in flight in the decode loop)", "micro-batches", 3)
v_chunks = _define("v_chunks", r"v", "model chunks per device in the interleaved schedule", "chunks", 3)
bubble = _define("bubble", r"\mathrm{bubble}", "idle device-time / total device-time of a pipeline", "-", 3)
t_forward = _define("t_forward", r"t_F", "forward time of one micro-batch through one stage", "s", 3)
t_backward = _define("t_backward", r"t_B", "backward time of one micro-batch through one stage (about 2 t_F)", "s", 3)
L_stage = _define("L_stage", r"L_\mathrm{stage}", "MoE layers in one pipeline stage (one rack)", "layers", 3)
bytes_act = _define("bytes_act", r"\mathrm{bytes}_\mathrm{act}", "bytes of one token's activation vector (d_model x bytes per value)", "bytes", 3)
t_scale_up = _define("t_scale_up", r"t_\text{scale-up}", "in-rack expert traffic time of one stage, per token", "s", 3)
t_scale_out = _define("t_scale_out", r"t_\text{scale-out}", "rack-boundary traffic time of one stage, per token", "s", 3)
r_stage = _define("r_stage", r"\frac{t_\text{scale-up}}{t_\text{scale-out}}", "in-rack time / rack-boundary time at a stage boundary (want >= 1)", "-", 3)
L_stage_min = _define("L_stage_min", r"L_\mathrm{stage}^\mathrm{min}", "fewest MoE layers per stage with r_stage >= 1", "layers", 3)
n_micro_min = _define("n_micro_min", r"m_\mathrm{min}", "fewest micro-batches that keep the bubble at or below a target", "micro-batches", 3)
bytes_stage = _define("bytes_stage", r"\mathrm{bytes}_\mathrm{stage}", "weight bytes one pipeline stage (rack) stores", "bytes", 3)

# --- Chapter 4: pipelining is not wise (lecture_lib.pipeline_memory) ---
# Also used here (same symbols): P, n_micro from Chapter 3.
E = n_ep  # Chapter 2's symbol, under the board's name
b = _define("b", r"b", "micro-batch: sequences that move through the pipeline together", "sequences", 4)
C_mem = _define("C_mem", r"C_\mathrm{mem}", "memory the deployment needs: all weights plus every sequence's KV", "bytes", 4)
c_mem = _define("c_mem", r"c_\mathrm{mem}", "memory needed on each GPU: weights plus KV per GPU", "bytes", 4)
c_weights = _define("c_weights", r"c_\mathrm{weights}", "weight bytes stored on each GPU", "bytes", 4)
c_kv = _define("c_kv", r"c_\mathrm{KV}", "KV-cache bytes stored on each GPU", "bytes", 4)
t_hop = _define("t_hop", r"t_\mathrm{hop}", "latency of one hop from rack to rack over scale-out", "s", 4)
t_hops = _define("t_hops", r"t_\mathrm{hops}", "time a GPipe training step loses to stage-boundary hops", "s", 4)
t_next_token = _define("t_next_token", r"t_\mathrm{token}", "time between two tokens of one sequence (board: t_token)", "s", 4)
t_stage = _define("t_stage", r"t_\mathrm{stage}", "time one stage needs to read its share of the weights", "s", 4)
n_up = _define("n_up", r"n_\mathrm{up}", "GPUs reading weights at the same time (one scale-up domain)", "GPUs", 4)
bw_gpu = _define("bw_gpu", r"\mathrm{bw}_\mathrm{GPU}", "HBM bandwidth of one GPU", "bytes/s", 4)

# --- Chapter 5: RL over-training beyond Chinchilla (lecture_lib.scaling) ---
x_alloc = _define("x_alloc", r"x", "the allocation being tuned (e.g. model size for a fixed target)", "-", 5)
coef_a = _define("coef_a", r"a", "scale of the falling cost a x^-p", "-", 5)
coef_b = _define("coef_b", r"b", "scale of the rising cost b x^q", "-", 5)
p_fall = _define("p_fall", r"p", "exponent of the falling cost a x^-p", "-", 5)
q_rise = _define("q_rise", r"q", "exponent of the rising cost b x^q", "-", 5)
cost_sum = _define("cost_sum", r"\mathrm{cost}", "a falling cost plus a rising cost", "-", 5)
x_star = _define("x_star", r"x^{*}", "the x that minimises the sum", "-", 5)
x_equal = _define("x_equal", r"x_{=}", "the x where the two costs are equal (the heuristic)", "-", 5)
penalty = _define("penalty", r"\mathrm{penalty}", "sum at x_equal / sum at x_star (>= 1)", "-", 5)
D_pretrain = _define("D_pretrain", r"D_\mathrm{pretrain}", "pre-training tokens", "tokens", 5)
D_RL = _define("D_RL", r"D_\mathrm{RL}", "RL tokens (rollouts generated)", "tokens", 5)
D_inference = _define("D_inference", r"D_\mathrm{inference}", "tokens served over the model's deployed life", "tokens", 5)
C_pretrain = _define("C_pretrain", r"C_\mathrm{pretrain}", "pre-training compute", "FLOPs", 5)
C_RL = _define("C_RL", r"C_\mathrm{RL}", "RL compute, in training-MFU-equivalent FLOPs", "FLOPs", 5)
C_inference = _define("C_inference", r"C_\mathrm{inference}", "lifetime inference compute, in training-MFU-equivalent FLOPs", "FLOPs", 5)
C_total = _define("C_total", r"C_\mathrm{total}", "training plus lifetime inference compute", "FLOPs", 5)
k_RL = _define("k_RL", r"k_\mathrm{RL}", "RL FLOPs per parameter per token: 2 (generate only) to 6 (train on all)", "-", 5)
ineff = _define("ineff", r"\mathrm{inefficiency}", "training MFU / decode MFU (>= 1; 3 on the flashcard)", "-", 5)
alpha_board = _define("alpha_board", r"\alpha", "board's weight of RL tokens: D_pretrain + alpha D_RL = beta D_inference", "-", 5)
beta_board = _define("beta_board", r"\beta", "board's weight of inference tokens: D_pretrain + alpha D_RL = beta D_inference", "-", 5)
traffic = _define("traffic", r"\mathrm{traffic}", "tokens per second served by a whole model family", "tokens/s", 5)
t_deploy = _define("t_deploy", r"t_\mathrm{deploy}", "how long a model is deployed before its successor", "s", 5)
n_family = _define("n_family", r"n_\mathrm{family}", "how many models of a family share the traffic", "-", 5)
tokens_per_param = _define("tokens_per_param", r"r_{D/N}", "training tokens per active parameter (20 for Chinchilla)", "tokens/param", 5)
D_chinchilla = _define("D_chinchilla", r"D_\mathrm{Chinchilla}", "compute-optimal tokens for a model size: 20 N", "tokens", 5)
overtrain = _define("overtrain", r"\mathrm{overtraining}", "D_pretrain / D_Chinchilla", "-", 5)
L_loss = _define("L_loss", r"L", "pre-training loss (nats per token)", "nats", 5)
E_loss = _define("E_loss", r"E", "irreducible loss of the Chinchilla fit", "nats", 5)
A_loss = _define("A_loss", r"A", "scale of the parameter term of the Chinchilla fit", "-", 5)
B_loss = _define("B_loss", r"B_\mathrm{fit}", "scale of the data term of the Chinchilla fit", "-", 5)
alpha_loss = _define("alpha_loss", r"\alpha_N", "parameter exponent of the Chinchilla fit", "-", 5)
beta_loss = _define("beta_loss", r"\beta_D", "data exponent of the Chinchilla fit", "-", 5)
C_train = _define("C_train", r"C", "pre-training compute budget", "FLOPs", 5)
N_opt = _define("N_opt", r"N_\mathrm{opt}", "compute-optimal active parameters for a budget", "params", 5)
D_opt = _define("D_opt", r"D_\mathrm{opt}", "compute-optimal tokens for a budget", "tokens", 5)

# --- Chapter 6: long context from API pricing (lecture_lib.context) ---
len_pass = _define("len_pass", r"\mathrm{len}_\mathrm{pass}", "new tokens per sequence in one pass (1 = decode, many = prefill)", "tokens", 6)
t_token = _define("t_token", r"t_\mathrm{token}", "time per processed token: step time / (B len_pass)", "s", 6)
len_kink = _define("len_kink", r"\mathrm{len}_\mathrm{kink}", "context where memory time overtakes compute time at batch B", "tokens", 6)
cost_rel = _define("cost_rel", r"\mathrm{cost}_\mathrm{rel}", "cost per token relative to the short-context (compute) floor", "-", 6)
price_step = _define("price_step", r"r_\mathrm{step}", "long-context price / short-context price (2 for Gemini input)", "-", 6)
len_cover = _define("len_cover", r"\mathrm{len}_\mathrm{cover}", "longest context whose cost the long-context price still covers", "tokens", 6)
kv_layers = _define("kv_layers", r"n_\mathrm{KV\,layers}", "layers that store their own KV cache (unique-KV layers)", "layers", 6)
kv_heads = _define("kv_heads", r"n_\mathrm{KV\,heads}", "key/value heads per layer (1 = MQA, all = MHA)", "heads", 6)
head_dim = _define("head_dim", r"d_\mathrm{head}", "dimension of one attention head", "values", 6)
bytes_kv = _define("bytes_kv", r"\mathrm{bytes}_\mathrm{KV}", "bytes per stored KV value (1 fp8, 2 bf16)", "bytes", 6)
attn_sparsity = _define("attn_sparsity", r"s_\mathrm{attn}", "sparse attention: context length / tokens actually read", "-", 6)
price_input = _define("price_input", r"p_\mathrm{in}", "API price of an input (prefill) token", "$/token", 6)
price_output = _define("price_output", r"p_\mathrm{out}", "API price of an output (decode) token", "$/token", 6)
mfu_prefill = _define("mfu_prefill", r"\mathrm{MFU}_\mathrm{prefill}", "compute utilisation while prefilling", "-", 6)
mfu_decode = _define("mfu_decode", r"\mathrm{MFU}_\mathrm{decode}", "compute utilisation while decoding", "-", 6)
flops_attn = _define("flops_attn", r"\mathrm{FLOP}_\mathrm{attn}", "attention's own FLOPs (QK^T and AV) for one new token", "FLOP", 6)
q_heads = _define("q_heads", r"n_\mathrm{Q\,heads}", "query heads per layer", "heads", 6)
attn_layers = _define("attn_layers", r"n_\mathrm{layers}", "attention layers the new token runs through", "layers", 6)
len_attn = _define("len_attn", r"\mathrm{len}_\mathrm{attn}", "context where attention FLOPs equal weight FLOPs", "tokens", 6)
T_hold = _define("T_hold", r"T_\mathrm{hold}", "how long a KV cache is kept before it is used again", "s", 6)
c_retrieve = _define("c_retrieve", r"C_\mathrm{retrieve}", "one-off cost to get one token's KV back into HBM", "$", 6)
c_hold = _define("c_hold", r"C_\mathrm{hold}", "cost to keep one token's KV in a tier for one second", "$/s", 6)
cost_kv = _define("cost_kv", r"\mathrm{Cost}", "cost of one token's KV over a hold: retrieve + hold", "$", 6)
cap_tier = _define("cap_tier", r"\mathrm{Cap}", "capacity of one storage device of a tier", "bytes", 6)
bw_tier = _define("bw_tier", r"\mathrm{BW}", "read bandwidth of that device", "bytes/s", 6)
price_device = _define("price_device", r"p_\mathrm{dev}", "what the device costs per second (rent or amortised)", "$/s", 6)
t_drain_tier = _define("t_drain_tier", r"t_\mathrm{drain}^\mathrm{tier}", "drain time of a tier: Cap / BW", "s", 6)
r_out_in = _define("r_out_in", r"p_\mathrm{out}/p_\mathrm{in}", "output price / input price, read as decode time / prefill time per token", "-", 6)
B_live = _define("B_live", r"B_\mathrm{live}", "sequences a lightly used deployment has in flight when served at once", "sequences", 6)
B_pool = _define("B_pool", r"B_\mathrm{pool}", "sequences a slow tier gathers into one batch by letting requests wait", "sequences", 6)
pool_saving = _define("pool_saving", r"s_\mathrm{pool}", "cost per token served at once / cost per token when pooled", "-", 6)
util = _define("util", r"u", "share of a fleet's paid-for hours that serve paid traffic", "-", 6)
r_slow = _define("r_slow", r"r_\mathrm{slow}", "price of a deferred (idle-hours) token / price of a standard one", "-", 6)

# --- Chapter 7: neural nets and ciphers (lecture_lib.reversible) ---
# Also used here (same symbols): d_model, bytes_value from Chapter 2.
n_layers = _define("n_layers", r"L", "layers (depth) of the network being trained", "layers", 7)
len_seq = _define("len_seq", r"\mathrm{len}_\mathrm{seq}", "tokens per training sequence", "tokens", 7)
act_values = _define("act_values", r"c_\mathrm{act}", "activation values kept per token per layer, in units of d_model (about 20)", "-", 7)
k_seg = _define("k_seg", r"k_\mathrm{seg}", "layers per checkpointed segment (one stored layer input every k_seg layers)", "layers", 7)
L_cross = _define("L_cross", r"L_\times", "depth at which checkpointing at its best segment and reversible layers hold the same activations", "layers", 7)
m_act = _define("m_act", r"M_\mathrm{act}", "activation memory held for the backward pass", "bytes", 7)
flops_train = _define("flops_train", r"\mathrm{FLOP}_\mathrm{train}", "training FLOPs per token", "FLOP", 7)
t_kv_recompute = _define("t_kv_recompute", r"t_\mathrm{recompute}", "time to recompute one token's KV: a forward pass", "s", 7)
t_kv_read = _define("t_kv_read", r"t_\mathrm{read}", "time to read one token's stored KV from HBM", "s", 7)
kv_advantage = _define("kv_advantage", r"t_\mathrm{recompute}/t_\mathrm{read}", "how many times faster reading a token's KV is than recomputing it", "-", 7)
rate_kv = _define("rate_kv", r"r_\mathrm{KV}", "FLOPs a KV cache saves per byte it keeps", "FLOP/byte", 7)
rate_rev = _define("rate_rev", r"r_\mathrm{rev}", "FLOPs a RevNet spends per byte of activations it saves", "FLOP/byte", 7)
flops_decode = _define("flops_decode", r"\mathrm{FLOP}_\mathrm{decode}", "FLOPs to decode one token of one sequence", "FLOP", 7)

# --- Chapter 8: roofline versus reality (lecture_lib.roofline additions, lecture_lib.collectives) ---
# Also used here (same symbols): B, N_total, N_active, n_experts, k_active, N_expert, bytes_param, mem_bw,
# FLOPs, len_ctx, bytes_tok from Chapters 1-2; flops_attn from Chapter 6; n_layers from Chapter 7.
n_touched = _define("n_touched", r"\bar{n}_\mathrm{touched}", "expected routed experts one MoE layer reads in a step", "experts", 8)
N_fixed = _define("N_fixed", r"N_\mathrm{fixed}", "parameters read every step whatever the routing: attention, dense MLPs, shared experts, router, head, and the input-embedding rows looked up", "params", 8)
L_moe = _define("L_moe", r"L_\mathrm{MoE}", "layers whose MLP is a mixture of experts", "layers", 8)
N_read = _define("N_read", r"N_\mathrm{read}", "parameters a decode step actually reads from HBM", "params", 8)
tau = _define("tau", r"\tau", "tokens accepted per sequence per step (speculative decoding / multi-token prediction)", "tokens", 8)
n_verify = _define("n_verify", r"n_\mathrm{verify}", "tokens per sequence the model processes in one step (1 + drafted tokens)", "tokens", 8)
hit = _define("hit", r"h", "prefix-cache hit rate: share of input tokens whose KV is already cached", "-", 8)
len_in = _define("len_in", r"\mathrm{len}_\mathrm{in}", "prompt (input) tokens of one request", "tokens", 8)
t_prefill = _define("t_prefill", r"t_\mathrm{prefill}", "compute time to prefill one request's uncached tokens", "s", 8)
n_ring = _define("n_ring", r"N", "devices taking part in a collective (ring size)", "devices", 9)
bytes_msg = _define("bytes_msg", r"V", "bytes of the full array a collective gathers, reduces or exchanges", "bytes", 9)
bw_link = _define("bw_link", r"W", "one-direction bandwidth per device at the collective's link level", "bytes/s", 9)
t_coll = _define("t_coll", r"t_\mathrm{coll}", "time of one collective", "s", 9)
# Critical batch of a parallel layout, and replicated vs sharded weights (lecture_lib.collectives).
# Also used here: d_model, bytes_value, n_ep, k_active, N_expert, N_total, bytes_param, mem_bw, FLOPs.
d_ff = _define("d_ff", r"d_\mathrm{ff}", "hidden width of one MLP (of one expert, in an MoE)", "values", 9)
n_mats = _define("n_mats", r"n_\mathrm{mats}", "d_model x d_ff weight matrices in one MLP (2 plain, 3 gated)", "-", 9)
n_tp = _define("n_tp", r"\mathrm{TP}", "tensor-parallel degree: devices one layer's matrices are split over", "devices", 9)
n_dp = _define("n_dp", r"\mathrm{DP}", "data-parallel degree: replicas that each run the whole model", "replicas", 9)
b_dev = _define("b_dev", r"b_\mathrm{dev}", "tokens each device processes per training step (batch / DP)", "tokens", 9)
bytes_grad = _define("bytes_grad", r"\mathrm{bytes}_\mathrm{grad}", "bytes per gradient value in the all-reduce", "bytes", 9)
t_comm = _define("t_comm", r"t_\mathrm{comm}", "communication time of a parallel layout's collectives", "s", 9)
b_dev_star = _define("b_dev_star", r"b^{*}_\mathrm{dev}", "critical tokens per device: communication time equals compute time", "tokens", 9)
d_ff_star = _define("d_ff_star", r"d^{*}_\mathrm{ff}", "critical MLP width: communication time equals compute time", "values", 9)
n_shards = _define("n_shards", r"n_\mathrm{shards}", "devices the weights are split over (1 = replicated)", "devices", 9)
w_dev = _define("w_dev", r"w_\mathrm{dev}", "weight bytes one device holds (and reads each step)", "bytes", 9)
# Collective latency, topology and training layouts (lecture_lib.collectives, topology, training_layout).
alpha_step = _define("alpha_step", r"\alpha", "start-up latency of one step (hop) of a collective's algorithm", "s", 9)
alpha_base = _define("alpha_base", r"\alpha_0", "fixed launch latency of one collective, paid once", "s", 9)
n_steps = _define("n_steps", r"n_\mathrm{steps}", "sequential steps of a collective's algorithm (ring AllReduce: 2(N-1))", "steps", 9)
w_link = _define("w_link", r"w", "one-direction bandwidth of one link of a ring or torus", "bytes/s", 9)
n_axes = _define("n_axes", r"n_\mathrm{axes}", "torus axes a collective spans (1 = ring, 2 or 3 for TPU slices)", "axes", 9)
n_long = _define("n_long", r"n_\mathrm{long}", "length of the longest torus axis a collective spans", "devices", 9)
n_fsdp = _define("n_fsdp", r"X", "FSDP (ZeRO-3) degree: chips the weights are sharded over and gathered from", "chips", 9)
n_chip = _define("n_chip", r"N_\mathrm{chips}", "chips of a training layout: X TP (times P pipeline stages)", "chips", 9)
B_tok = _define("B_tok", r"B_\mathrm{tok}", "tokens in one training step (the global batch)", "tokens", 9)
bw_fsdp = _define("bw_fsdp", r"W_X", "one-direction bandwidth per chip on the FSDP (data) axis", "bytes/s", 9)
bw_tp = _define("bw_tp", r"W_\mathrm{TP}", "one-direction bandwidth per chip on the tensor-parallel axis", "bytes/s", 9)
x_opt = _define("x_opt", r"X_\mathrm{opt}", "FSDP degree that minimises FSDP + TP communication at a fixed chip count", "chips", 9)
b_chip_star = _define("b_chip_star", r"(B_\mathrm{tok}/N_\mathrm{chips})^{*}", "critical tokens per chip of a training layout", "tokens", 9)
# Embedding rows, mixed precision and layouts (issue 21 §2, items 1-4; lecture_lib.roofline).
# Also used here: B, d_model, n_tp, n_ep, n_chips, kv_heads, c_weights, c_kv, hbm_capacity, N_expert, n_experts, L_moe.
n_vocab = _define("n_vocab", r"V_\mathrm{vocab}", "vocabulary size: rows of the embedding table", "tokens", 8)
N_emb = _define("N_emb", r"N_\mathrm{emb}", "input-embedding parameters a step reads: one d_model row per distinct token looked up", "params", 8)
N_body = _define("N_body", r"N_\mathrm{body}", "parameters outside the routed experts and the input embedding, read in full every step: attention, dense MLPs, shared experts, router, norms, output head", "params", 8)
N_dense = _define("N_dense", r"N_\mathrm{dense}", "parameters outside the routed experts, as stored (N_body plus the input-embedding table)", "params", 9)
bytes_expert = _define("bytes_expert", r"\mathrm{bytes}_\mathrm{expert}", "bytes per stored routed-expert weight (may differ from bytes_param: mixed precision)", "bytes", 9)
n_redundant = _define("n_redundant", r"n_\mathrm{redundant}", "extra copies of hot experts per MoE layer (DeepSeek: 32)", "experts", 9)
r_kv = _define("r_kv", r"r_\mathrm{KV}", "KV replication: a device's KV bytes over an even 1/n split (n_tp ways over fewer KV heads copies them)", "-", 9)
FLOPs_expert = _define("FLOPs_expert", r"\mathrm{FLOPs}_\mathrm{expert}", "FLOP/s at the routed experts' matmul format", "FLOP/s", 8)
FLOPs_attn = _define("FLOPs_attn", r"\mathrm{FLOPs}_\mathrm{attn}", "FLOP/s at the attention format (MLA prefill attention runs in BF16)", "FLOP/s", 8)
# Chapter 8, section 2: how many tokens speculative decoding should draft per step (Leviathan et al. 2023,
# arXiv 2211.17192, section 3.1).
alpha_acc = _define("alpha_acc", r"\alpha_\mathrm{acc}", "acceptance rate: chance the target model accepts one drafted token (each independently)", "-", 8)
n_draft = _define("n_draft", r"\gamma", "draft tokens proposed per sequence per step (the depth; n_verify = gamma + 1)", "tokens", 8)
c_draft = _define("c_draft", r"c_\mathrm{draft}", "time of one draft forward pass over the time of one plain target step", "-", 8)
rho_step = _define("rho_step", r"\rho", "compute time over memory time of a plain decode step (below 1: memory-bound)", "-", 8)
spec_speedup = _define("spec_speedup", r"S_\mathrm{spec}", "tokens per second with speculative decoding over without", "-", 8)
# Chapter 8, section 7: the realistic estimate's formulas (lecture_lib.realistic). Its symbols carry the names
# realistic.py gives them, so show() typesets them from this table and notation(chapter=8) lists them; they are
# kept in a tuple, not module names, so the checker's board-name aliases stay as they were.
REALISTIC_STEP = tuple(_define(name, latex, meaning, unit, 8) for name, latex, meaning, unit in (
    (r"\bar{m}", r"\bar{m}", "routed tokens per expert-parallel GPU in one MoE layer, on average (B k / E)", "tokens"),
    ("I", r"I", "load imbalance: the busiest expert-parallel GPU's routed tokens over the mean", "-"),
    ("m", r"m", "tokens one expert receives in one MoE layer", "tokens"),
    ("M_tile", r"M_\mathrm{tile}", "rows (tokens) of one tile of a grouped matmul: 64 on Hopper and Blackwell", "tokens"),
    (r"\eta_{tile}", r"\eta_\mathrm{tile}", "tile efficiency: useful rows over the rows of the whole tiles paid for", "-"),
    (r"t_{real}", r"t_\mathrm{real}", "realistic step time: the bound's terms apart, at real kernel speeds, plus communication", "s"),
    (r"t_{attn}", r"t_\mathrm{attn}", "attention's FLOPs at peak (realistic estimate)", "s"),
    (r"t_{kv}", r"t_\mathrm{KV}", "the KV cache read at full HBM bandwidth (realistic estimate)", "s"),
    (r"t_{other}", r"t_\mathrm{other}", "FLOPs of the matmuls outside the routed experts, at peak", "s"),
    (r"t_{expert}", r"t_\mathrm{expert}", "routed experts' FLOPs at peak, tokens spread evenly", "s"),
    (r"t_{weights}", r"t_\mathrm{weights}", "weights read at full HBM bandwidth, except experts with few tokens", "s"),
    (r"t_{weights,experts}", r"t_\mathrm{weights,small}", "weights of experts that receive at most 128 tokens, read at full HBM bandwidth", "s"),
    (r"t_{comm}", r"t_\mathrm{comm}", "all-to-all and all-reduce time of one step, not overlapped", "s"),
    (r"\eta_{HBM}", r"\eta_\mathrm{HBM}", "share of HBM bandwidth the best published kernels reach", "-"),
    (r"\eta_{attn}", r"\eta_\mathrm{attn}", "share of the BF16 peak the best published attention kernels reach", "-"),
    (r"\eta_{mm}", r"\eta_\mathrm{mm}", "share of the peak the best published matmul kernels reach", "-"),
    (r"\eta_{small}", r"\eta_\mathrm{small}", "share of HBM bandwidth a matmul of at most 128 rows (tokens) reaches", "-"),
))


def rows(chapter: int | None = None) -> list[Notation]:
    """The table's rows, optionally only those a chapter introduces (0-7, or None for all)."""
    from . import validate

    chapter = validate.chapter("chapter", chapter)
    return [row for row in TABLE.values() if chapter is None or row.chapter == chapter]


def latex_names() -> dict[sp.Symbol, str]:
    """Symbol -> LaTeX, for ``sympy.latex(expr, symbol_names=...)``."""
    return {row.symbol: row.latex for row in TABLE.values()}


# ================================================================================ reading text safely
# A formula typed as text ("FLOPs * N_total / (2 * mem_bw)") is *parsed*, never run: Python's own
# parser gives a syntax tree, and only an allow-list of node types is turned into SymPy objects, one
# by one. Nothing of the text is ever passed to eval, exec, sympify or parse_expr.

MAX_TEXT = 400          # characters
MAX_NODES = 200         # syntax-tree nodes
MAX_DEPTH = 40          # nesting of brackets and operators
MAX_DIGITS = 30         # digits of one integer literal (use powers of ten beyond)
MAX_EXPONENT = 1000     # |exponent| of a power whose exponent is a number
MAX_POWER_DIGITS = 10_000   # digits of a power of two plain numbers (9**999 is fine, (10**30)**1000 is not)

FUNCTIONS = {"sqrt": (sp.sqrt, 1, 1), "exp": (sp.exp, 1, 1), "log": (sp.log, 1, 2), "ln": (sp.log, 1, 1),
             "Max": (sp.Max, 1, 8), "Min": (sp.Min, 1, 8), "max": (sp.Max, 1, 8), "min": (sp.Min, 1, 8)}
CONSTANTS = {"pi": sp.pi}


class ParseError(ValueError):
    """Text that :func:`parse` refuses. ``.reason`` says why in a learner's words; the message is
    ``"text: <reason>"`` (naming the parameter)."""

    cause: str | None = None   # for text that is not an expression: what is wrong with it, where a scan can tell

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(f"text: {reason}")


class UnknownNames(ParseError):
    """The text uses names that are neither course symbols nor allowed functions (``.names``)."""

    def __init__(self, names):
        self.names = sorted(names)
        super().__init__(f"uses {', '.join(self.names)}, which the course does not define")


READS = ("products with * (or ×, ·, a space or nothing: 2B, 2(B+1)), / (or ÷) for division, powers with ** or ^ "
         "(or superscripts: ², ⁻¹, ᴮ), roots with sqrt(...) or √, round or square brackets, and the course's symbol names")
"""The notations :func:`parse` reads, as the error for unreadable text lists them."""

_AS_ASCII = str.maketrans({"−": "-", "×": "*", "·": "*", "⋅": "*", "∗": "*", "÷": "/", "[": "(", "]": ")"})


def _superscripts() -> dict[str, str]:
    """Every superscript character whose compatibility form is one ASCII letter, digit or sign (``ᴮ`` -> ``B``,
    ``ⁿ`` -> ``n``, ``⁻`` -> ``-``, ``⁽`` -> ``(``): what a keyboard's or a phone's superscript gives, from the
    Unicode blocks that hold them (Latin-1's ², ³, ¹; spacing modifiers; phonetic extensions; superscripts)."""
    import unicodedata

    blocks = [(0xB2, 0xB9), (0x2B0, 0x2FF), (0x1D2C, 0x1DBF), (0x2070, 0x209F), (0x2C7D, 0x2C7D)]
    found = {}
    for code in (code for first, last in blocks for code in range(first, last + 1)):
        character = chr(code)
        plain = unicodedata.normalize("NFKC", character)
        if (unicodedata.decomposition(character).startswith("<super>") and len(plain) == 1
                and plain in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-=()"):
            found[character] = plain
    found["⁻"] = "-"
    return found


_SUPERSCRIPT = _superscripts()
_SUPERSCRIPT_TEXT = str.maketrans(_SUPERSCRIPT)
_SUPERSCRIPT_POWER = re.compile("[" + re.escape("".join(_SUPERSCRIPT)) + "]+")
_ROOT = "__root__"   # stands for √ while the text is tokenized (no answer can use it: underscore names are refused)


def _board_letters() -> set[str]:
    """Names that stand for a quantity on the board though they are not a symbol's own name: the letters the
    notation table writes (``k`` for k_active, ``R`` for n_racks) and the names the module exports for a symbol
    (``E`` for n_ep)."""
    letters = {row.latex for row in TABLE.values() if row.latex.isidentifier()}
    return letters | {name for name, value in globals().items()
                      if isinstance(value, sp.Symbol) and not name.startswith("_") and name.isidentifier()}


def _is_call(name: str) -> bool:
    """Whether ``name`` followed by a bracket is a call (a function), not a product (a symbol). A function
    (:data:`FUNCTIONS`) is called; a quantity is multiplied: a course symbol, a constant, a board letter (``E``,
    ``k``) or any one-letter name, so ``E(1 - x)`` reads as ``E*(1 - x)``, as ``2(B+1)`` reads as ``2*(B+1)``.
    Another name before a bracket (``Sqrt(B)``, ``f(x)``) is a call, which :func:`parse` refuses by name."""
    if name in FUNCTIONS:
        return True
    return not (name in TABLE or name in CONSTANTS or len(name) == 1 or name in _board_letters())


def _syntax_cause(text: str) -> str | None:
    """Why ``text`` is not an expression, in a learner's words, where a simple scan can tell: an unbalanced bracket,
    a character no expression uses, an operator with nothing after it, an equation's ``=``, a comma. None when
    none of these is the cause (then only the list of what is read, :data:`READS`, can help)."""
    ascii_text = text.translate(_AS_ASCII)
    depth, opened_at = 0, []
    for index, character in enumerate(ascii_text):
        if character == "(":
            opened_at.append(index)
        elif character == ")":
            if not opened_at:
                return (f"the bracket ')' at character {index + 1} closes nothing: there is one ')' more than '(' "
                        "before it (unbalanced brackets)")
            opened_at.pop()
    if opened_at:
        missing = len(opened_at)
        return (f"{missing} bracket{'s' if missing > 1 else ''} opened and never closed: the text has {missing} "
                f"more '(' than ')' (unbalanced brackets); add the missing ')'")
    if "=" in ascii_text:
        return "it has '=': write only the expression (the right-hand side), not an equation"
    if "," in ascii_text:
        return ("it has a comma: an expression is one value (write 2400, not 2,400, and no list of several "
                "values)")
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-*/^() √")
    allowed |= set(_SUPERSCRIPT)
    stray = sorted({character for character in ascii_text if character not in allowed and not character.isspace()})
    if stray:
        shown = " ".join(repr(character) for character in stray)
        return f"it holds {shown}, which no expression here uses (a stray character): remove {'it' if len(stray) == 1 else 'them'}"
    stripped = ascii_text.rstrip()
    if stripped and stripped[-1] in "+-*/^":
        return f"it ends with '{stripped[-1]}': something is missing after it"
    if re.search(r"\(\s*\)", ascii_text):
        return "it has an empty bracket '()': something is missing inside it"
    if re.search(r"[+\-*/^]\s*\)", ascii_text):
        return "an operator is followed by ')': something is missing before the bracket closes"
    return None


def _as_ascii(text: str) -> str:
    """``text`` with maths typography in Python's spelling: − as -, × · ⋅ ∗ as *, a run of
    superscripts as a bracketed power (``B²`` -> ``B**(2)``, ``10⁻³`` -> ``10**(-3)``, ``xᴮ`` -> ``x**(B)``: Python
    would otherwise read a superscript letter as a plain one and make ``xᴮ`` the name ``xB``), ÷ as /, square
    brackets as round ones (grouping: nothing is ever indexed), any Unicode
    space (a non-breaking one pasted from a page) as a space, and √ as a placeholder name
    :func:`_powers_and_roots` turns into ``sqrt(...)``."""
    text = _SUPERSCRIPT_POWER.sub(lambda run: f"**({run.group().translate(_SUPERSCRIPT_TEXT)})", text.translate(_AS_ASCII))
    return re.sub(r"\s+", " ", text).replace("√", f" {_ROOT} ")


def _tokens(text: str) -> list[tuple[int, str]] | None:
    """(type, string) of each token of ``text`` (layout tokens left out), or None if it does not tokenize."""
    import io
    import tokenize

    layout = (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT)
    try:
        return [(token.type, token.string) for token in tokenize.generate_tokens(io.StringIO(text).readline)
                if token.type not in layout]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def _closing(tokens: list[tuple[int, str]], start: int) -> int:
    """Index of the bracket that closes the one at ``start`` (the last token if none does)."""
    depth = 0
    for index in range(start, len(tokens)):
        depth += {"(": 1, ")": -1}.get(tokens[index][1], 0)
        if depth == 0:
            return index
    return len(tokens) - 1


def _operand_end(tokens: list[tuple[int, str]], start: int) -> int:
    """Index just past what a √ at ``start - 1`` applies to: a bracket, a number, a name, a call or
    another √ with its own operand; ``start`` itself when an operator or the end follows (nothing)."""
    import tokenize

    if start >= len(tokens):
        return start
    kind, string = tokens[start]
    if string == _ROOT:
        return _operand_end(tokens, start + 1)
    if string == "(":
        return _closing(tokens, start) + 1
    if kind == tokenize.NAME and start + 1 < len(tokens) and tokens[start + 1][1] == "(" and _is_call(string):
        return _closing(tokens, start + 1) + 1
    return start + 1 if kind in (tokenize.NAME, tokenize.NUMBER) else start


def _powers_and_roots(tokens: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The tokens with each √ written as ``sqrt( operand )`` and each ``^`` as ``**``; a √ with
    nothing after it to take the root of is a :class:`ParseError`."""
    import tokenize

    out, index = [], 0
    while index < len(tokens):
        kind, string = tokens[index]
        if string == _ROOT:
            end = _operand_end(tokens, index + 1)
            if end == index + 1:
                raise ParseError("√ must be followed by what it is the root of, e.g. √B or √(B+1)")
            operand = _powers_and_roots(tokens[index + 1:end])
            out += [(tokenize.NAME, "sqrt"), (tokenize.OP, "(")] + operand + [(tokenize.OP, ")")]
            index = end
            continue
        out.append((kind, "**") if (kind, string) == (tokenize.OP, "^") else (kind, string))
        index += 1
    return out


def _with_implicit_products(tokens: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``2 B`` and ``2B`` read as ``2*B``, ``(a)(b)`` as ``(a)*(b)``: a ``*`` goes between a number, a
    name or a closing bracket and a following number, name or opening bracket, except between a
    name that is not a course symbol and its bracket (a call, which :func:`parse` judges), and between
    two numbers: nobody writes ``2 3`` for 6, and ``1..2`` (a typo) must not read as ``1. * .2``."""
    import tokenize

    out, previous = [], None
    for token in tokens:
        if previous is not None:
            left_value = previous[0] in (tokenize.NUMBER, tokenize.NAME) or previous[1] == ")"
            right_value = token[0] in (tokenize.NUMBER, tokenize.NAME) or token[1] == "("
            call = previous[0] == tokenize.NAME and token[1] == "(" and _is_call(previous[1])
            numbers = previous[0] == token[0] == tokenize.NUMBER
            if left_value and right_value and not call and not numbers:
                out.append((tokenize.OP, "*"))
        out.append(token)
        previous = token
    return out


def _python_text(text: str) -> str:
    """``text`` as Python arithmetic for ``ast.parse`` (which only builds a tree; nothing is run):
    typography made ASCII (:func:`_as_ascii`), ``^`` made ``**`` (so it has power's precedence and
    groups right to left: ``2^3^2`` is 2⁹), √ made ``sqrt(...)``, implicit products given their
    ``*``. Text that does not tokenize is returned with only its typography changed, and text that
    already holds the placeholder for √ as it is, for ``ast.parse`` or :func:`parse` to refuse."""
    if _ROOT in text:
        return text
    ascii_text = _as_ascii(text)
    tokens = _tokens(ascii_text)
    if tokens is None:
        return ascii_text
    return " ".join(string for _, string in _with_implicit_products(_powers_and_roots(tokens)))


def parse(text, *, unknown: str = "error") -> sp.Expr:
    """A SymPy expression from text such as ``"FLOPs*N_total*bytes_param/(2*N_active*mem_bw)"``.

    Allowed: numbers, the course's symbols (:data:`TABLE`), ``pi``, ``+ - /``, unary minus, brackets,
    and the functions ``sqrt``, ``exp``, ``log``/``ln``, ``Max``/``max``, ``Min``/``min``. Maths is read
    as people write it (:data:`READS`):

    - products: ``*``, ``×``, ``·`` (also ``⋅``, ``∗``), or nothing: ``2B``, ``4 B``, ``2(B+1)``,
      ``(a+b)(a-b)``;
    - powers: ``**`` or ``^``, both with power's precedence and grouping right to left (``2^3^2`` is
      512, ``-B^2`` is ``-(B**2)``, ``2*B^2`` is ``2*(B**2)``), or superscripts (``B²``, ``10⁻³``, ``2ᴮ``);
    - roots: ``sqrt(x)`` or ``√``, which applies to the bracket, number, name or call right after it
      (``√B``, ``√(B+1)``, ``2√B``);
    - the minus sign ``−`` (U+2212) as ``-``, ``÷`` as ``/``, and square brackets as round ones.

    Everything else (attributes, method calls, strings, comparisons, lambdas...) is refused
    with a :class:`ParseError`, as is text longer than :data:`MAX_TEXT`, deeper than :data:`MAX_DEPTH`,
    an integer of more than :data:`MAX_DIGITS` digits, or a power with a numeric exponent above
    :data:`MAX_EXPONENT`. The text only ever becomes a syntax tree (``ast.parse``) whose allowed nodes
    are turned into SymPy objects one by one; it is never run.

    ``unknown="error"`` raises :class:`UnknownNames` for other names; ``unknown="symbol"`` makes
    them plain positive symbols (for derivations outside the notation table).
    """
    import ast
    import math

    if not isinstance(unknown, str) or unknown not in ("error", "symbol"):   # an array has no single truth value
        raise ValueError(f"unknown must be 'error' or 'symbol', got {unknown!r}")
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    if not isinstance(text, str):
        raise ParseError(f"must be a string, got {type(text).__name__}")
    text = text.strip()
    if not text:
        raise ParseError("it is empty")
    if len(text) > MAX_TEXT:
        raise ParseError(f"it is {len(text)} characters long; at most {MAX_TEXT} are read, so simplify it first")
    try:
        python_text = _python_text(text)
    except RecursionError:
        raise ParseError(f"the expression is nested more than {MAX_DEPTH} deep; simplify it first") from None
    try:
        tree = ast.parse(python_text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        cause = _syntax_cause(text)
        error = ParseError(f"could not parse {text[:60]!r}: {cause + '. It reads ' if cause else 'write '}{READS}")
        error.cause = cause
        raise error from None
    if sum(1 for _ in ast.walk(tree)) > MAX_NODES:
        raise ParseError(f"the expression has more than {MAX_NODES} parts; simplify it first")
    unknown_names: set[str] = set()

    def refuse(node) -> ParseError:
        what = {ast.Attribute: "an attribute or method (a '.name')", ast.Subscript: "an index ('[...]')",
                ast.Compare: "a comparison", ast.Lambda: "a lambda", ast.BoolOp: "'and'/'or'",
                ast.JoinedStr: "an f-string", ast.keyword: "a keyword argument",
                ast.Starred: "a '*' argument", ast.IfExp: "an 'if'", ast.NamedExpr: "':='",
                ast.List: "a list", ast.Tuple: "a tuple or a comma", ast.Dict: "a dict", ast.Set: "a set"}
        words = next((w for kind, w in what.items() if isinstance(node, kind)), None)
        if isinstance(node, ast.Constant):
            words = f"a {type(node.value).__name__} constant"
        elif isinstance(node, ast.BinOp):
            words = f"the operator {type(node.op).__name__}"
        elif isinstance(node, ast.UnaryOp):
            words = f"the operator {type(node.op).__name__}"
        return ParseError(f"only numbers, the course's symbols, + - × / ^ (or * and **), brackets, √ and "
                          f"{', '.join(sorted(set(FUNCTIONS)))} are read; this has {words or type(node).__name__}")

    def power(base, exponent):
        if exponent.is_number:
            try:
                size = abs(complex(sp.N(exponent, 15)))
            except (TypeError, ValueError, OverflowError):
                size = math.inf
            if not size <= MAX_EXPONENT:
                raise ParseError(f"an exponent above {MAX_EXPONENT}: no answer in this course needs one")
            if isinstance(base, sp.Rational) and base not in (0, 1, -1):
                digits = size * math.log10(max(abs(base.p), abs(base.q)))
                if digits > MAX_POWER_DIGITS:
                    raise ParseError(f"a number with about {digits:.0f} digits; use a symbol or a smaller power")
        return sp.Pow(base, exponent)

    operators = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
                 ast.Div: lambda a, b: a / b, ast.Pow: power}

    def build(node, depth):
        if depth > MAX_DEPTH:
            raise ParseError(f"the expression is nested more than {MAX_DEPTH} deep; simplify it first")
        if isinstance(node, ast.Expression):
            return build(node.body, depth + 1)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            if isinstance(node.value, int):
                if node.value >= 10**MAX_DIGITS:
                    raise ParseError(f"an integer of more than {MAX_DIGITS} digits; write powers of ten "
                                     "(e.g. 10**40) instead")
                return sp.Integer(node.value)
            if not math.isfinite(node.value):
                raise ParseError("a number too large for a float; write powers of ten (e.g. 10**400) instead")
            return sp.Float(repr(node.value))
        if isinstance(node, ast.Name):
            name = node.id
            if name in TABLE:
                return TABLE[name].symbol
            if name in CONSTANTS:
                return CONSTANTS[name]
            if name in FUNCTIONS:
                raise ParseError(f"{name} is a function: write {name}(...)")
            if name.startswith("_") or not name.isidentifier():
                raise ParseError("names starting with an underscore are not symbols of the course")
            unknown_names.add(name)
            return sp.Symbol(name, positive=True, real=True)
        if isinstance(node, ast.BinOp) and type(node.op) in operators:
            return operators[type(node.op)](build(node.left, depth + 1), build(node.right, depth + 1))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            value = build(node.operand, depth + 1)
            return -value if isinstance(node.op, ast.USub) else value
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS
                and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)):
            function, fewest, most = FUNCTIONS[node.func.id]
            if not fewest <= len(node.args) <= most:
                raise ParseError(f"{node.func.id}() takes {fewest if fewest == most else f'{fewest} to {most}'} "
                                 f"argument(s), got {len(node.args)}")
            return function(*[build(a, depth + 1) for a in node.args])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            raise ParseError(f"a method call ('.{node.func.attr}(...)'): attributes and methods are never read, "
                             "nothing is run")
        if isinstance(node, ast.Call):
            named = f"{node.func.id}(...) reads as calling {node.func.id}, but " if isinstance(node.func, ast.Name) else ""
            product = (f"; for a product write {node.func.id}*(...)" if isinstance(node.func, ast.Name) else "")
            raise ParseError(named + "only the functions " + ", ".join(sorted(FUNCTIONS)) + " may be called (with "
                             "plain arguments); nothing else is run" + product)
        raise refuse(node)

    try:
        expression = build(tree, 0)
    except ParseError:
        raise
    except (RecursionError, MemoryError, OverflowError, ValueError, TypeError, ZeroDivisionError) as error:
        raise ParseError(f"could not read {text[:60]!r} ({type(error).__name__})") from None
    if unknown_names and unknown == "error":
        raise UnknownNames(unknown_names)
    if not isinstance(expression, sp.Expr):
        raise ParseError(f"{text[:60]!r} is not an arithmetic expression")
    return expression


def _to_sympy(name: str, value, *, unknown: str = "symbol"):
    """``value`` as a SymPy object: text through :func:`parse` (never evaluated as code), anything
    else through ``sympify(strict=True)`` (numbers and SymPy objects only; no string fallback).
    A ValueError names ``name`` when that fails."""
    if isinstance(value, (str, bytes)):
        try:
            return parse(value, unknown=unknown)
        except ParseError as error:
            raise ValueError(f"{name}: {error.reason}") from None
    try:
        return sp.sympify(value, strict=True)
    except (sp.SympifyError, TypeError, ValueError, AttributeError):
        raise ValueError(f"{name} must be a SymPy expression, a number or formula text, got "
                         f"{type(value).__name__}") from None
