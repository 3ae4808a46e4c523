"""The notebook tables: built from the library, every preset present, notation per chapter."""

import pytest

from lecture_lib import hardware, models, symbols
from lecture_lib.explorers import tables


def test_full_notation_lists_every_symbol_with_its_chapter():
    text = tables.notation().data
    assert text.count("<tr>") == len(symbols.TABLE) + 1            # header + one row per symbol
    assert "<th style='text-align:left;padding:2px 8px'>chapter</th>" in text


@pytest.mark.parametrize("chapter", range(1, 9))
def test_each_chapter_has_its_own_folded_notation(chapter):
    rows = symbols.rows(chapter)
    assert rows, f"chapter {chapter} introduces no symbols"
    text = tables.notation(chapter=chapter, folded=True).data
    assert text.startswith("<details>") and f"the {len(rows)} symbols Chapter {chapter} introduces" in text
    assert all(f"${row.latex}$" in text for row in rows)


def test_preset_tables_name_every_chip_system_and_model():
    chips, systems, presets = tables.chips().data, tables.systems().data, tables.model_presets().data
    assert all(name in chips for name in hardware.chip_names())
    assert all(name in systems for name in hardware.system_names())
    assert all(models.get(name).name in presets for name in models.names())
