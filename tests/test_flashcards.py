"""Anki flashcards (lecture_lib.practice.flashcards): the .apkg opens, holds every chapter's cards, and its GUIDs
are unique and stable across exports (so re-importing updates cards instead of duplicating them)."""

import re
import sqlite3
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest

from lecture_lib.practice import checks, flashcards
from lecture_lib.formula import Formula

pytest.importorskip("genanki", reason="genanki is in the test extra (pip install -e '.[test]')")

ROOT = Path(__file__).resolve().parents[1]


def notes(apkg: Path, tmp_path: Path) -> list[dict]:
    """Every note of the package: guid, tags, fields and deck ids of its cards (read with sqlite3)."""
    with zipfile.ZipFile(apkg) as archive:
        assert "collection.anki2" in archive.namelist()
        archive.extract("collection.anki2", tmp_path)
    db = sqlite3.connect(tmp_path / "collection.anki2")
    try:
        decks = {}
        for note_id, deck_id in db.execute("select nid, did from cards"):
            decks.setdefault(note_id, set()).add(deck_id)
        found = [{"guid": guid, "tags": tags.split(), "fields": fields.split("\x1f"), "decks": decks[note_id],
                  "model": mid}
                 for note_id, guid, tags, fields, mid in db.execute("select id, guid, tags, flds, mid from notes")]
    finally:
        db.close()
    return found


def _chapter_formulas(chapter):
    import importlib

    claimed = {(m, n) for owner, selection in flashcards.CHAPTER_FORMULAS.items() if owner != chapter
               for m, names in selection.items() for n in names}
    for module_name in flashcards.CHAPTER_MODULES[chapter]:
        module = importlib.import_module(f"lecture_lib.{module_name}")
        yield from (v for k, v in vars(module).items()
                    if isinstance(v, Formula) and k.isupper() and (module_name, k) not in claimed)
    for module_name, names in flashcards.CHAPTER_FORMULAS.get(chapter, {}).items():
        module = importlib.import_module(f"lecture_lib.{module_name}")
        assert all(isinstance(getattr(module, name), Formula) for name in names)
        yield from (getattr(module, name) for name in names)


def expected_formulas(chapter):
    """The chapter's Formulas whose right-hand side (and note) no earlier card has: one card per formula."""
    seen, count = set(), 0
    for number in sorted(flashcards.CHAPTER_MODULES):
        for formula in _chapter_formulas(number):
            key = (formula.latex(), formula.note)
            if key not in seen:
                seen.add(key)
                count += number == chapter
    return count


@pytest.fixture(scope="module")
def two_exports(tmp_path_factory):
    folder = tmp_path_factory.mktemp("anki")
    counts = [flashcards.export(folder / f"deck{i}.apkg") for i in (1, 2)]
    return folder, counts


def test_the_package_holds_every_chapters_cards(two_exports, tmp_path):
    folder, (counts, _) = two_exports
    found = notes(folder / "deck1.apkg", tmp_path)
    assert len(found) == sum(counts.values())
    per_chapter = Counter(tag for note in found for tag in note["tags"] if tag.startswith("chapter"))
    last = max(int(path.name[:2]) for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert last == 11     # the lab after Chapter 1 is numbered 11
    numbered = sorted(int(path.name[:2]) for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))[1:]
    assert sorted(per_chapter) == [f"chapter{c:02d}" for c in numbered], "a chapter has no cards"
    for chapter in numbered:
        in_chapter = [n for n in found if f"chapter{chapter:02d}" in n["tags"]]
        kinds = Counter(kind for n in in_chapter for kind in n["tags"] if kind in flashcards.KINDS)
        assert kinds["formula"] == expected_formulas(chapter)
        assert kinds["formula"] > 0 or not flashcards.CHAPTER_MODULES[chapter]   # Chapter 10 (the planner) has none
        assert kinds["number"] >= 1
        choices = [pid for pid in checks.problem_ids(chapter=chapter) if checks.PROBLEMS[pid].kind == "choice"]
        in_words = [c for c in flashcards._concepts() if c.chapter == chapter]
        assert kinds["concept"] == len(choices) + len(in_words)
        assert per_chapter[f"chapter{chapter:02d}"] == counts[chapter] == len(in_chapter)
        assert {d for n in in_chapter for d in n["decks"]} == {flashcards.deck_id(chapter)}
    assert {n["model"] for n in found} == {flashcards.MODEL_ID}


def test_guids_are_unique_and_stable_across_exports(two_exports, tmp_path):
    folder, _ = two_exports
    first = notes(folder / "deck1.apkg", tmp_path / "a")
    second = notes(folder / "deck2.apkg", tmp_path / "b")
    guids = [n["guid"] for n in first]
    assert len(guids) == len(set(guids))
    by_key = lambda found: {n["fields"][3]: n["guid"] for n in found}   # noqa: E731
    assert by_key(first) == by_key(second)
    import genanki

    assert by_key(first)["formula:roofline.T_COMPUTE"] == genanki.guid_for("lecture_lib", "formula:roofline.T_COMPUTE")


def test_cards_use_anki_mathjax_and_carry_sources(two_exports, tmp_path):
    folder, _ = two_exports
    found = notes(folder / "deck1.apkg", tmp_path)
    formulas = [n for n in found if "formula" in n["tags"]]
    assert all(n["fields"][1].startswith(r"\[") and n["fields"][1].count(r"\]") >= 1 for n in formulas)
    bare_dollar = re.compile(r"(?<!\\)\$")   # \$ is a LaTeX dollar sign; a bare $ a Markdown math delimiter
    assert not any(bare_dollar.search(n["fields"][0] + n["fields"][1]) for n in found), \
        "Anki's MathJax wants \\( \\), not $"
    assert all(n["fields"][2].strip() for n in found), "every card names its source"
    t_compute = next(n for n in formulas if n["fields"][3] == "formula:roofline.T_COMPUTE")
    assert r"\frac{2 B N_\mathrm{active}}{\mathrm{FLOPs}}" in t_compute["fields"][1]
    numbers = {n["fields"][3]: n["fields"][1] for n in found if "number" in n["tags"]}
    assert numbers["number:1.h100-drain"] == "23.9 ms"      # 80 GB / 3.35 TB/s, from the H100 preset
    assert numbers["number:7.recompute-overhead"] == "+33%"  # 8·N vs 6·N


def test_concept_cards_show_the_statement_and_the_answer():
    cards = {c.key: c for c in flashcards.concept_cards(1, solutions_dir=ROOT / "solutions")}
    card = cards["concept:1.9"]
    assert "HGX H200" in card.front and "<details>" not in card.front and "Hint" not in card.front
    assert checks.PROBLEMS["1.9"].expected() in card.back
    bare = {c.key: c for c in flashcards.concept_cards(1)}["concept:1.9"]
    assert "Options:" in bare.front


def test_math_delimiters_are_converted():
    assert flashcards._math("a $x^2$ b $$y$$") == r"a \(x^2\) b \[y\]"
    assert flashcards._math(r"costs \$5") == r"costs \$5"


def test_command_line_and_bad_output_name(tmp_path):
    out = tmp_path / "deck.apkg"
    completed = subprocess.run([sys.executable, "-m", "lecture_lib.practice.flashcards", str(out), "--no-concepts"],
                               cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert out.exists() and "chapter 7:" in completed.stdout
    found = notes(out, tmp_path)
    assert not any("concept" in n["tags"] for n in found)
    with pytest.raises(ValueError, match="out"):
        flashcards.export(tmp_path / "deck.zip")


def test_key_number_sources_are_readable_text():
    """A preset's sources are a mapping: the card shows each distinct source once, after the fields it
    backs, and only the fields the number uses, never a Python repr."""
    for chapter in flashcards.chapters():
        for card in flashcards.number_cards(chapter):
            assert card.source.strip(), card.key
            for raw in ("mappingproxy", "{'", "': '", "{&#x27;"):
                assert raw not in card.source, (card.key, card.source[:200])
            assert len(card.source) < 800, (card.key, len(card.source))
    drain = {c.key: c for c in flashcards.number_cards(1)}["number:1.h100-drain"]
    assert drain.source.startswith("hbm bandwidth, hbm capacity: ") and "flops" not in drain.source


# ---- issue 31 §5: Chapter 10 (the planner; Chapter 9 before the split of issue 49) has cards of its own, and each formula is one card
def test_the_planner_chapter_has_real_cards():
    ninth = [card for card in flashcards.cards() if card.chapter == 10]
    assert len(ninth) >= 12, "issue 47 §6: the planner's chapter has at least 12 cards"
    assert {card.kind for card in ninth} >= {"number", "concept"}
    assert len({card.front for card in ninth}) == len(ninth)
    for card in ninth:
        assert card.back and "nan" not in card.back and "inf" not in card.back and card.source, card.key


def test_each_formula_is_one_card_naming_where_else_the_library_has_it():
    formulas = [card for card in flashcards.cards() if card.kind == "formula"]
    answers = [card.back.split("<br><small>The same formula")[0] for card in formulas]
    assert len(answers) == len(set(answers)), "a formula's answer appears on two cards"
    weights = next(card for card in formulas if card.key == "formula:roofline.T_WEIGHTS")
    assert "<code>moe.T_WEIGHTS</code> (Chapter 2)" in weights.back
    assert "<code>pipeline_memory.T_WEIGHTS</code> (Chapter 4)" in weights.back
    assert not any(card.key == "formula:moe.T_WEIGHTS" for card in formulas)


# ---- issue 47 §6: the deck `make flashcards` writes spells out every option and cites files that exist
MAKE_DECK = [sys.executable, "-m", "lecture_lib.practice.flashcards"]   # the Makefile's `flashcards` recipe
CHECKOUT_PATH = re.compile(r"(?<![\w/.-])((?:lecture_lib|solutions|notebooks|exercises|docs|tools|tests)/[\w./-]*\w)")


@pytest.fixture(scope="module")
def made_deck(tmp_path_factory):
    """The deck as `make flashcards` writes it: the module run from the checkout, no options."""
    folder = tmp_path_factory.mktemp("make-flashcards")
    out = folder / "llm-serving-math.apkg"
    completed = subprocess.run(MAKE_DECK + [str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr
    return {n["fields"][3]: n for n in notes(out, folder)}


def _plain(text: str) -> str:
    """Text as a reader sees it: tags, entities, Markdown and math delimiters gone, spaces collapsed."""
    import html

    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    text = re.sub(r"\\[()\[\]]|\$|\*\*?|`", " ", text)
    return " ".join(text.split())


def _statement_options(problem_id: str) -> dict[str, str]:
    """The options as the solutions notebook's statement spells them out, read here without the deck's code:
    each bullet line `- `"x"`: text` of the problem's markdown cell."""
    import nbformat

    chapter = int(problem_id.split(".")[0])
    path = next((ROOT / "solutions").glob(f"{chapter:02d}_*.ipynb"))
    heading = re.compile(rf"^###\s+Problem\s+{re.escape(problem_id)}\b")
    cell = next(c for c in nbformat.read(path, as_version=4).cells
                if c.cell_type == "markdown" and heading.match(c.source))
    return dict(re.findall(r'^\s*-\s*`"([^"`]+)"`\s*:\s*(.+?)\s*$', cell.source, flags=re.M))


def test_the_made_deck_spells_out_every_option_of_every_choice_problem(made_deck):
    choices = [pid for pid in checks.problem_ids() if checks.PROBLEMS[pid].kind == "choice"]
    assert choices
    spelled_out = 0
    for problem_id in choices:
        problem = checks.PROBLEMS[problem_id]
        note = made_deck[f"concept:{problem_id}"]
        front, back = _plain(note["fields"][0]), _plain(note["fields"][1])
        assert "Options:" not in front, (problem_id, "the statement was not found: a bare list of option names")
        texts = _statement_options(problem_id)
        for option in problem.options:
            if option in texts:    # a letter: its text must be on the card, not the letter alone
                assert _plain(texts[option]) in front, (problem_id, option, texts[option])
            else:                  # the option is itself the words ("fp4 kv cache", "HBM")
                assert _plain(option).lower() in front.lower(), (problem_id, option)
        answer = str(problem.expected())
        if answer in texts:
            spelled_out += 1
            assert _plain(texts[answer]) in back, (problem_id, "the back names the answer's option text")
    assert spelled_out == sum(1 for pid in choices if set(checks.PROBLEMS[pid].options) == {"a", "b", "c", "d"})


def test_every_file_the_made_deck_cites_exists_in_the_checkout(made_deck):
    cited = Counter()
    for key, note in made_deck.items():
        for field in note["fields"][:3]:
            for path in CHECKOUT_PATH.findall(field):
                cited[path] += 1
                assert (ROOT / path).exists(), f"{key} cites {path}, which is not in the checkout"
    concepts = [n for key, n in made_deck.items() if key.startswith("concept:")]
    assert all(CHECKOUT_PATH.search(n["fields"][2]) for n in concepts), "every concept card names its file"
    assert any(path.startswith("lecture_lib/practice/problems/ch") for path in cited)
    assert any(path.startswith("solutions/") for path in cited)
    assert not any("problems_0" in path for path in cited), "the problems' old home"


def test_the_made_deck_names_each_chapter_after_its_notebook(made_deck):
    """The deck's title per chapter comes from notebooks/NN_*.ipynb, which the module finds beside lecture_lib/."""
    import nbformat

    for chapter in flashcards.chapters():
        notebook = next((ROOT / "notebooks").glob(f"{chapter:02d}_*.ipynb"))
        first = nbformat.read(notebook, as_version=4).cells[0].source.split("\n", 1)[0].lstrip("# ").strip()
        assert flashcards._chapter_title(chapter) == first


def test_the_planner_chapters_numbers_are_the_planners(made_deck):
    """Chapter 10's worked-plan cards quote what lecture_lib.plan computes for the notebook's worked plan."""
    from lecture_lib import plan, units

    settings = dict(flashcards.WORKED_PLAN)
    worked = plan.plan(settings.pop("model"), settings.pop("system"), **settings).numbers
    import html

    backs = {key: html.unescape(n["fields"][1]) for key, n in made_deck.items()}
    assert backs["number:10.worked-operating-batch"] == f"{worked['decode']['batch']:,.0f} sequences"
    assert backs["number:10.worked-cost-output"] == units.dollars(worked["cost"]["usd_per_million_output"])
    assert backs["number:10.memory-utilization"] == units.percent(plan.MEMORY_UTILIZATION)
    ninth = [key for key in made_deck if made_deck[key]["fields"][3] == key and "chapter09" in made_deck[key]["tags"]]
    assert len(ninth) >= 12
