"""Issue 49 §1: Chapter 8 split in two (the serving capstone, and communication and training layouts as Chapter 9),
the planner renumbered 10 and the lab 11, and the exam topic "choosing speculative decoding's depth" in Chapter 8.

Each chapter is readable in one sitting (about 3,000 words at most) with its own opening question, predict-then-
reveal, explorer, folded takeaways and symbol table; the problems, quizzes, flashcards, site order and lecture links
follow the split."""

import re
import subprocess
from pathlib import Path

import nbformat
import numpy as np
import pytest
import sympy as sp

from lecture_lib import collectives, hardware, models, roofline, symbols
from lecture_lib.practice import checks, flashcards

ROOT = Path(__file__).resolve().parents[1]
CH8 = ROOT / "notebooks" / "08_roofline_vs_reality.ipynb"
CH9 = ROOT / "notebooks" / "09_communication_and_training_layouts.ipynb"
MAX_WORDS = 3000
LECTURE_SECONDS = 2 * 3600 + 13 * 60 + 50      # 2:13:50

# The problem ids the split moved or renumbered (old -> new), as the report and ch09.py's docstring give them.
MOVED = {"8.8": "9.1", "8.15": "9.2", "8.16": "9.3", "8.12": "9.4", "8.11": "9.5", "8.18": "9.6", "8.17": "9.7"}
RENUMBERED_IN_8 = {"8.9": "8.8", "8.10": "8.9", "8.13": "8.10", "8.14": "8.11"}
TITLES_9 = ["Tensor-parallel all-reduces for one step", "Latency of the tensor-parallel all-reduces at batch 1",
            "AllToAll on a ring against a switch", "Tokens per GPU for data-parallel training across nodes",
            "Where tensor parallelism stops paying", "What one GPU of DeepSeek's decode unit holds",
            "How much FSDP on a TPU v5p slice?", "How wide must an expert be across nodes?"]


def read(path):
    return nbformat.read(path, as_version=4)


def words(notebook) -> int:
    return sum(len(cell.source.split()) for cell in notebook.cells if cell.cell_type == "markdown")


@pytest.mark.parametrize("path, chapter", [(CH8, 8), (CH9, 9)], ids=["08", "09"])
def test_each_half_is_one_sitting_with_the_chapter_anatomy(path, chapter):
    notebook = read(path)
    assert words(notebook) <= MAX_WORDS, f"{path.name}: {words(notebook)} words"
    markdown = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    code = "\n".join(c.source for c in notebook.cells if c.cell_type == "code")
    assert markdown[0].startswith(f"# Chapter {chapter} · ") and "https://youtu.be/xmkSf5IS-zw?t=" in markdown[0]
    assert "**After this chapter you can**" in markdown[0]
    assert any(m.startswith("## The question") and "**Predict first.**" in m for m in markdown)
    assert re.search(r"\w+ = predict\.\w+\(\)", code) and ".ask()" in code and ".reveal()" in code
    assert re.search(r"\w+Explorer\(", code)
    assert f"notation(chapter={chapter}, folded=True)" in code
    takeaways = next(m for m in markdown if m.startswith("## Takeaways"))
    assert "<details>" in takeaways and "</details>" in takeaways, "the takeaways are folded"
    assert symbols.rows(chapter), f"Chapter {chapter} introduces no symbol"


def test_the_communication_sections_moved_to_chapter_9():
    eight = "\n".join(c.source for c in read(CH8).cells)
    nine = "\n".join(c.source for c in read(CH9).cells)
    for moved in ("collectives.ALL_GATHER", "collectives.DP_CRITICAL_BATCH", "topology.TORUS_ALL_TO_ALL",
                  "tl.best_layouts", "roofline.KV_REPLICATION", "collectives.ALPHA_BETA"):
        assert moved not in eight and moved in nine, moved
    headings = re.findall(r"^## (\d+) · ", nine, re.M)
    assert headings == ["1", "2", "3"]
    assert re.findall(r"^## (\d+) · ", eight, re.M) == [str(n) for n in range(1, 8)]
    assert "## 6b" not in eight + nine


def test_every_formula_a_chapter_shows_has_its_symbols_introduced_by_then():
    """The notation table of each half lists what it brings; nothing it shows needs a symbol from a later chapter."""
    for path, chapter in ((CH8, 8), (CH9, 9)):
        code = "\n".join(c.source for c in read(path).cells if c.cell_type == "code")
        shown = set()
        for module, name in re.findall(r"\b(roofline|collectives|topology|tl|realistic)\.([A-Z][A-Z_]+)\b", code):
            from lecture_lib import realistic, topology, training_layout
            owner = {"roofline": roofline, "collectives": collectives, "topology": topology, "tl": training_layout,
                     "realistic": realistic}[module]
            formula = getattr(owner, name, None)
            expression = getattr(formula, "rhs", None)
            if expression is not None:
                shown |= {str(s) for s in expression.free_symbols}
        later = [name for name in shown if name in symbols.TABLE and symbols.TABLE[name].chapter > chapter]
        assert later == [], f"Chapter {chapter} shows symbols introduced later: {later}"


def test_the_problem_ids_follow_the_split():
    assert checks.problem_ids(chapter=8) == [f"8.{n}" for n in range(1, 13)]
    assert checks.problem_ids(chapter=9) == [f"9.{n}" for n in range(1, 9)]
    assert [checks.PROBLEMS[pid].title for pid in checks.problem_ids(chapter=9)] == TITLES_9
    solutions = read(ROOT / "solutions" / "09_communication_and_training_layouts.ipynb")
    headings = [re.match(r"### Problem (\d+\.\d+) · (.*)", c.source).groups() for c in solutions.cells
                if c.cell_type == "markdown" and c.source.startswith("### Problem")]
    assert headings == list(zip(checks.problem_ids(chapter=9), TITLES_9))
    assert set(MOVED.values()) | {"9.8"} == set(checks.problem_ids(chapter=9))


def test_the_renumbering_left_no_old_name_behind():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    stale = []
    for name in tracked:
        if not name.endswith((".py", ".ipynb", ".md", ".toml", ".yml")) or name.startswith("node_modules"):
            continue
        if name == "tests/test_chapter_split.py":
            continue
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        stale += [f"{name}: {old}" for old in ("09_plan_a_deployment", "10_lab_roofline_on_your_machine")
                  if old in text]
    assert stale == []
    numbers = sorted(int(p.name[:2]) for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert numbers == list(range(0, 12))
    for folder in ("solutions", "exercises"):
        assert sorted(int(p.name[:2]) for p in (ROOT / folder).glob("[0-9][0-9]_*.ipynb")) == list(range(1, 12))
    assert sorted(int(p.name[:2]) for p in (ROOT / "quizzes").glob("[0-9][0-9]_*_quiz.ipynb")) == list(range(1, 11))
    assert checks.problem_ids(chapter=10) == [f"10.{n}" for n in range(1, 9)]
    assert checks.problem_ids(chapter=11) == [f"11.{n}" for n in range(1, 9)]


def test_the_site_reads_the_lab_after_chapter_1_and_the_halves_in_order():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    import build_site

    order = [p.name[:2] for p in build_site.chapters(None)]
    assert order == ["00", "01", "11", "02", "03", "04", "05", "06", "07", "08", "09", "10"]


def test_flashcards_follow_the_split():
    assert flashcards.CHAPTER_MODULES[9] == ("collectives", "topology", "training_layout")
    assert flashcards.CHAPTER_MODULES[8] == ()
    nine = {card.key for card in flashcards.formula_cards(9)}
    assert "formula:collectives.DP_CRITICAL_BATCH" in nine and "formula:roofline.KV_REPLICATION" in nine
    eight = {card.key for card in flashcards.formula_cards(8)}
    assert {"formula:roofline.SPEC_TOKENS", "formula:roofline.SPEC_SPEEDUP"} <= eight
    assert "number:9.h100-dp-critical" in {card.key for card in flashcards.number_cards(9)}


def test_the_final_exam_has_two_questions_per_chapter():
    exam = read(ROOT / "quizzes" / "99_final_exam.ipynb")
    ids = [re.match(r"### Problem (\d+)\.", c.source).group(1) for c in exam.cells
           if c.cell_type == "markdown" and c.source.startswith("### Problem")]
    assert sorted(set(ids), key=int) == [str(n) for n in range(1, 11)]
    assert all(ids.count(str(n)) == 2 for n in range(1, 11))


LINK = re.compile(r"\[(\d\d):(\d\d):(\d\d)\]\(https://youtu\.be/xmkSf5IS-zw\?t=(\d+)\)")


@pytest.mark.parametrize("path", [CH8, CH9, ROOT / "notebooks" / "00_start_here.ipynb", ROOT / "README.md"],
                         ids=["08", "09", "00", "README"])
def test_every_lecture_link_opens_where_its_label_says(path):
    text = path.read_text(encoding="utf-8")
    links = LINK.findall(text)
    assert links
    for h, m, s, t in links:
        assert int(h) * 3600 + int(m) * 60 + int(s) == int(t) <= LECTURE_SECONDS, (h, m, s, t)


# --- Choosing speculative decoding's depth (issue 49 §5) -------------------------------------------------------

def test_the_speed_up_is_one_at_no_drafts_and_the_papers_factor_when_memory_bound():
    from lecture_lib.symbols import alpha_acc, c_draft, n_draft, rho_step

    speedup = roofline.SPEC_SPEEDUP.rhs
    assert sp.simplify(speedup.subs(n_draft, 0)) == 1
    paper = (1 - alpha_acc ** (n_draft + 1)) / ((1 - alpha_acc) * (n_draft * c_draft + 1))   # arXiv 2211.17192
    assert sp.simplify(speedup.subs(rho_step, 0) - paper) == 0
    assert sp.simplify(roofline.SPEC_TOKENS.rhs.subs(n_draft, 0)) == 1
    # Leviathan et al.'s Table/figure regime: alpha = 0.8, c = 0.05 gives an expected 3.1x at its best gamma.
    best = roofline.best_draft_depth(acceptance=0.8, draft_cost=0.05)
    direct = [float(paper.subs({alpha_acc: sp.Rational(4, 5), c_draft: sp.Rational(1, 20), n_draft: g})) for g in range(17)]
    assert best["depth"] == int(np.argmax(direct)) and best["speedup"] == pytest.approx(max(direct))


def test_the_best_depth_shrinks_as_the_batch_grows_and_vanishes_when_compute_bound():
    h200 = collectives.deployment(hardware.get("H200"), n_chips=1)
    depths = []
    for batch in (1, 64, 128):
        plain = roofline.decode_bound(models.get("llama-3-70b"), h200, batch=batch, len_ctx=4096, weight_dtype="fp8",
                                      kv_dtype="fp8")
        rho = plain["t_compute"] / (plain["t_weights"] + plain["t_kv"])
        depths.append(roofline.best_draft_depth(acceptance=0.8, draft_cost=0.05, compute_ratio=rho)["depth"])
    assert depths[0] > depths[1] > depths[2] >= 1
    assert roofline.best_draft_depth(acceptance=0.8, draft_cost=0.05, compute_ratio=1.5)["depth"] == 0
    assert checks.PROBLEMS["8.12"].expected() == depths[1]


@pytest.mark.parametrize("kwargs, name", [(dict(acceptance=1.0, draft_cost=0.05), "acceptance"),
                                          (dict(acceptance=-0.1, draft_cost=0.05), "acceptance"),
                                          (dict(acceptance=0.8, draft_cost=float("nan")), "draft_cost"),
                                          (dict(acceptance=0.8, draft_cost=0.05, compute_ratio="x"), "compute_ratio"),
                                          (dict(acceptance=0.8, draft_cost=0.05, max_depth=0), "max_depth")])
def test_bad_input_to_the_depth_search_is_named(kwargs, name):
    with pytest.raises(ValueError, match=name):
        roofline.best_draft_depth(**kwargs)


def test_the_spec_depth_problem_nudges_its_common_slips():
    problem = checks.PROBLEMS["8.12"]
    memory_bound = roofline.best_draft_depth(acceptance=0.8, draft_cost=0.05)["depth"]
    verdict = checks.check("8.12", memory_bound)
    assert verdict.status == "wrong" and "one sequence" in verdict.message
    assert problem.kind == "number" and problem.expected() == 4


def test_the_critical_batch_explorer_draws_the_library_formula():
    from lecture_lib.explorers.communication import CriticalBatchExplorer

    explorer = CriticalBatchExplorer()
    h100 = hardware.get("H100")
    star = collectives.dp_critical_batch(dp=8, flops=h100.flops["bf16"], link_bandwidth=h100.scale_up_bandwidth)
    assert explorer.star.get_xdata()[0] == pytest.approx(star)
    explorer.controls["link"].value = explorer.controls["link"].options[1]
    explorer.controls["dp"].value = 64
    explorer.refresh()
    across = collectives.dp_critical_batch(dp=64, flops=h100.flops["bf16"], link_bandwidth=8 * h100.scale_out_bandwidth)
    assert explorer.star.get_xdata()[0] == pytest.approx(across)
