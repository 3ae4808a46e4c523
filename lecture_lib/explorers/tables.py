"""Tables for notebooks: notation, hardware, systems, models, balance batches, drain times, the
parallelism menu.

Each function returns an ``IPython.display.HTML`` object built from the presets, so the numbers a
learner reads are the library's numbers, with their sources.
"""

from __future__ import annotations

import html

from lecture_lib import hardware, models, roofline, symbols, units

FORMATS = ("bf16", "fp8", "fp4")


def html_table(header: list[str], rows: list[list[str]], *, caption: str = "") -> "IPython.display.HTML":
    """A plain HTML table: ``header`` escaped, ``rows`` of cells already HTML, an optional caption below."""
    from IPython.display import HTML

    head = "".join(f"<th style='text-align:left;padding:2px 8px'>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left;padding:2px 8px'>{cell}</td>" for cell in row)
                   + "</tr>" for row in rows)
    cap = f"<caption style='caption-side:bottom;text-align:left;font-size:90%'>{caption}</caption>" if caption else ""
    return HTML(f"<table style='font-size:13px;border-collapse:collapse'>{cap}<thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>")


def _link(text: str) -> str:
    """Turn the URLs inside a source string into links."""
    words = []
    for word in html.escape(text).split():
        if word.startswith("http"):
            tail = "" if word[-1].isalnum() or word[-1] == "/" else word[-1]
            url = word[:-1] if tail else word
            words.append(f"<a href='{url}' target='_blank'>{url}</a>{tail}")
        else:
            words.append(word)
    return " ".join(words)


def notation(chapter: int | None = None, *, folded: bool = False):
    """The notation table (symbol, meaning, unit), for one chapter or, with a chapter column, for all.

    ``folded=True`` puts it inside a ``<details>`` block that the learner opens when needed.
    """
    from IPython.display import HTML

    from lecture_lib import validate

    chapter = validate.chapter("chapter", chapter)
    folded = validate.boolean("folded", folded)
    selected = symbols.rows(chapter)
    if chapter is None:
        table = html_table(["chapter", "symbol", "meaning", "unit"],
                            [[str(row.chapter), f"${row.latex}$", html.escape(row.meaning), html.escape(row.unit)]
                             for row in selected])
    else:
        table = html_table(["symbol", "meaning", "unit"],
                            [[f"${row.latex}$", html.escape(row.meaning), html.escape(row.unit)] for row in selected])
    if not folded:
        return table
    what = (f"all {len(selected)} symbols of the course, by chapter" if chapter is None
            else f"the {len(selected)} symbols Chapter {chapter} introduces")
    return HTML(f"<details><summary><b>Notation</b>: {what} (click to open)</summary>{table.data}</details>")


def chips():
    """Every chip preset: dense FLOP/s per format, HBM, scale-up, price, with sources."""
    rows = []
    for name in hardware.chip_names():
        chip = hardware.get(name)
        flops = ", ".join(f"{fmt} {chip.flops[fmt] / 1e12:,.0f}" for fmt in ("fp32", "bf16", "fp8", "int8", "fp4")
                          if fmt in chip.flops)
        price = units.dollars(chip.price_per_hour) if chip.price_per_hour else "—"
        sources = "<br>".join(f"<small>{html.escape(k)}: {_link(v)}</small>" for k, v in chip.sources.items())
        rows.append([f"<b>{html.escape(chip.name)}</b>", flops, units.bandwidth(chip.hbm_bandwidth),
                     units.bytes_(chip.hbm_capacity), units.bandwidth(chip.scale_up_bandwidth),
                     str(chip.scale_up_domain), price,
                     f"<details><summary>sources</summary>{sources}</details>"])
    return html_table(["chip", "dense TFLOP/s", "HBM bandwidth", "HBM", "scale-up (per chip, one way)",
                        "scale-up domain", "$/chip-hour", ""], rows,
                       caption="Dense peak FLOP/s count 2 per multiply-add; no structured-sparsity figures.")


def systems():
    """Scale-up systems with their aggregate figures."""
    rows = []
    for name in hardware.system_names():
        system = hardware.get_system(name)
        rows.append([f"<b>{html.escape(system.name)}</b>", f"{system.n_chips} × {html.escape(system.chip.name)}",
                     units.bytes_(system.hbm_capacity), units.bandwidth(system.hbm_bandwidth),
                     units.bandwidth(system.scale_up_bandwidth), units.seconds(system.hbm_drain_time)])
    return html_table(["system", "chips", "HBM", "HBM bandwidth", "scale-up bandwidth (aggregate)",
                        "HBM drain time"], rows)


def model_presets():
    """Every model preset: shape, total and active parameters against published figures, KV bytes."""
    rows = []
    for name in models.names():
        m = models.get(name)
        moe = (f"{m.experts_per_token} of {m.n_routed_experts}" + (f" + {m.n_shared_experts} shared"
                                                                    if m.n_shared_experts else "")) if m.is_moe else "dense"
        rows.append([f"<b>{html.escape(m.name)}</b>", str(m.n_layers), str(m.d_model), m.attention_kind, moe,
                     f"{units.count(m.params_total)} ({units.count(m.published_params_total)})",
                     f"{units.count(m.params_active)} ({units.count(m.published_params_active)})",
                     units.number(m.sparsity) if m.is_moe else f"{m.sparsity:.2f} (dense¹)", units.bytes_(m.kv_bytes_per_token(2)),
                     f"<details><summary>source</summary><small>{_link(m.source)}</small></details>"])
    return html_table(["model", "layers", "d_model", "attention", "experts per token", "total (published)",
                        "active (published)", "sparsity", "KV/token bf16", "source"], rows,
                       caption="KV bytes per token count every layer at full length; sliding-window layers "
                               "cost less at long context (see Chapter 6). ¹ A dense model's sparsity is a little "
                               "above 1 because the input embedding is a table lookup, not a multiply: its "
                               "parameters count in the total but not as active (the course's convention).")


def balance_batches():
    """The hardware ratio of every chip in every format it multiplies in: B* at sparsity 1."""
    rows = []
    for name in hardware.chip_names():
        chip = hardware.get(name)
        cells = [f"<b>{html.escape(chip.name)}</b>"]
        for fmt in FORMATS:
            cells.append(f"{roofline.hardware_ratio(chip, fmt, hardware.BYTES_PER_VALUE[fmt]):,.0f}" if fmt in chip.flops else "—")
        rows.append(cells)
    return html_table(["chip"] + [f"ratio, {fmt} weights and multiplies" for fmt in FORMATS], rows,
                       caption="Ratio = (FLOP/s ÷ 2) × bytes per weight ÷ HBM bytes/s; B* = ratio × sparsity.")


def drain_times():
    """HBM capacity / bandwidth for every chip: the natural step time (lecture 00:23:43)."""
    rows = []
    for name in hardware.chip_names():
        chip = hardware.get(name)
        t = roofline.HBM_DRAIN_TIME(hbm_capacity=chip.hbm_capacity, mem_bw=chip.hbm_bandwidth)
        rows.append([f"<b>{html.escape(chip.name)}</b>", units.bytes_(chip.hbm_capacity),
                     units.bandwidth(chip.hbm_bandwidth), units.seconds(t)])
    return html_table(["chip", "HBM", "bandwidth", "drain time"], rows)


def parallelism_menu():
    """Chapter 3's parallelism menu (:data:`lecture_lib.pipeline.PARALLELISM_MENU`) as an HTML table."""
    from lecture_lib import pipeline

    header = ["parallelism", "cuts", "traffic", "where it fits", "in the lecture"]
    rows = [[item["name"], item["cuts"], item["traffic"], item["fits"], item["lecture"]]
            for item in pipeline.PARALLELISM_MENU]
    return html_table(header, rows, caption="Lecture 00:48:00-00:53:39. DP and PP can span racks; EP and TP "
                                            "want the fast all-to-all of one scale-up domain.")
