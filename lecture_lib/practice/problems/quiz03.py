"""Chapter 3's quiz and exam questions (quizzes/03_pipeline_parallelism_quiz.ipynb): problems 3.101-3.106.

Released only through nbgrader (``nbgrader-source quizzes``); most numbers vary per student. Every expected value
is computed from the library (formulas and the schedule simulator), as in ``ch03.py``.
"""

from __future__ import annotations

from lecture_lib import hardware, models, pipeline

from ..registry import Mistake, Problem, Vary, register


def _bubble(stages: int = 8, microbatches: int = 32) -> float:
    return float(pipeline.bubble_fraction(stages=stages, microbatches=microbatches))


def _stage_bytes(stages: int = 8) -> float:
    return float(pipeline.WEIGHT_BYTES_PER_STAGE(N_total=models.get("llama-3-405b").params_total, bytes_param=2,
                                                 P=stages))


def _training_bubble(global_batch: int = 256, *, per_micro: int = 4) -> float:
    return _bubble(16, global_batch // per_micro)


def _more_stages() -> str:
    before, after = _bubble(8, 16), _bubble(16, 16)
    return "a" if after > before else "b" if after < before else "c"


def _one_f_one_b() -> str:
    gpipe = pipeline.simulate(schedule="gpipe", stages=4, microbatches=8)
    interleaved = pipeline.simulate(schedule="1f1b", stages=4, microbatches=8)
    changed = {"bubble": gpipe.bubble_fraction != interleaved.bubble_fraction,
               "memory": gpipe.peak_in_flight != interleaved.peak_in_flight,
               "time": gpipe.makespan != interleaved.makespan}
    if changed == {"bubble": False, "memory": True, "time": False}:
        return "b"
    return "a" if changed["bubble"] else "c"


def _layers_per_stage(k: int = 4) -> float:
    return float(pipeline.min_layers_per_stage(k_active=k, scale_up_ratio=pipeline.bandwidth_ratio(hardware.get("GB300"))))


STAGES = Vary("stages", "P, the pipeline stages", 8, (4, 6, 12, 16), "stages")
MICRO = Vary("microbatches", "the micro-batches per step", 32, (8, 16, 24, 48, 64), "micro-batches")
STAGES_405 = Vary("stages", "P, the pipeline stages", 8, (2, 4, 16, 32), "stages")
GLOBAL = Vary("global_batch", "the global batch", 256, (64, 128, 512, 1024), "sequences")
K_ACTIVE = Vary("k", "k, the experts each token is routed to", 4, (1, 2, 6, 8, 16), "experts")

register("3.101", Problem(
    "The bubble of a deeper pipeline", "number", _bubble, rtol=0.02, variants=(STAGES, MICRO),
    mistakes=(Mistake(lambda stages=8, microbatches=32: (stages - 1) / microbatches,
                      "Close, but the step lasts P + n_micro - 1 slots, not n_micro."),)))
register("3.102", Problem(
    "Llama 3 405B's weights per stage", "number", _stage_bytes, rtol=0.02, unit="bytes", variants=(STAGES_405,),
    mistakes=(Mistake(lambda stages=8: _stage_bytes(stages) / 2, "BF16 is two bytes per parameter."),)))
register("3.103", Problem(
    "The bubble of a training run", "number", _training_bubble, rtol=0.02, variants=(GLOBAL,),
    mistakes=(Mistake(lambda global_batch=256: _bubble(16, global_batch),
                      "That counts each sequence as a micro-batch; a micro-batch holds 4."),)))
register("3.104", Problem(
    "More stages, same micro-batches", "choice", _more_stages, options=("a", "b", "c", "d"),
    nudges={"b": "Each extra stage adds a slot of ramp-up and of ramp-down that no micro-batch fills.",
            "c": "Look where P sits in pipeline.BUBBLE_FRACTION."}))
register("3.105", Problem(
    "What 1F1B changes", "choice", _one_f_one_b, options=("a", "b", "c", "d"),
    nudges={"a": "Simulate both: pipeline.simulate(...).bubble_fraction is the same for the two schedules.",
            "c": "Simulate both: the makespans are equal."}))
register("3.106", Problem(
    "The thinnest stage on a GB300 NVL72", "number", _layers_per_stage, rtol=0.02, unit="layers",
    variants=(K_ACTIVE,),
    mistakes=(Mistake(lambda k=4: 2 * _layers_per_stage(k), "Off by 2: each layer sends tokens out and back."),)))
