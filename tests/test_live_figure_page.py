"""The live figure's page script (lecture_lib/explorers/live_figure.js, the file anywidget loads) in headless
Chromium, against a model that stands in for ipywidgets' (attributes set together, then one change event per
attribute in the order the message listed them): the orderings a kernel and a learner can produce, played one by
one, each of which once showed a picture or a table that was not the controls' (issue 28). No kernel, no JupyterLab:
a second per test."""

from __future__ import annotations

import base64
import io

import pytest

from lecture_lib.explorers.live_figure import ESM_PATH

pytestmark = pytest.mark.browser

# A stand-in for a widget model: set() sets every attribute first, then fires change:<name> in the order given
# (Backbone's, which ipywidgets' set_state uses); a set from inside a handler fires its own events at once.
PAGE = """
async ([esm, red, blue]) => {
  const bytes = (b64) => { const raw = atob(b64), a = new Uint8Array(raw.length);
                           for (let i = 0; i < raw.length; i++) a[i] = raw.charCodeAt(i); return new DataView(a.buffer); };
  const fake = (attrs, manager) => {
    const handlers = {};
    const m = { attrs: { ...attrs }, widget_manager: manager, history: [],
      get(k) { return this.attrs[k]; },
      on(e, f) { (handlers[e] = handlers[e] || []).push(f); },
      off(e, f) { handlers[e] = (handlers[e] || []).filter((g) => g !== f); },
      trigger(e, ...args) { for (const f of [...(handlers[e] || [])]) f(...args); },
      set(k, v) { this.setState({ [k]: v }); },
      setState(state) {
        const changed = Object.keys(state).filter((k) => this.attrs[k] !== state[k]);
        Object.assign(this.attrs, state);
        if (changed.includes('value')) this.history.push(state.value);
        for (const k of changed) this.trigger('change:' + k);
      },
      send() {} };
    return m;
  };
  const models = {};
  const manager = { get_model: async (id) => models[id] };
  models.c = fake({ value: 61 });
  models.r = fake({ value: 'R61' });
  const frame = (at, extra = {}) => ({ ops: [], n: at, state: { c: String(at) }, attrs: { c: 'value' }, ...extra });
  const figure = fake({ pixels: [40, 30], css_size: [40, 30], alt: 'A61', points: new DataView(new ArrayBuffer(0)),
                        background: bytes(red), frame: frame(61) }, manager);
  const el = document.createElement('div');
  document.body.append(el);
  const paints = [];
  el.addEventListener('lecture-frame', (e) => {
    const canvas = el.querySelector('canvas');
    const [r, g, b] = canvas.getContext('2d').getImageData(canvas.width / 2, canvas.height / 2, 1, 1).data;
    paints.push({ ...e.detail, colour: r > b ? 'red' : b > r ? 'blue' : 'none', readout: models.r.get('value') });
  });
  const url = 'data:text/javascript;base64,' + btoa(unescape(encodeURIComponent(esm)));
  const module = await import(url);
  module.default.render({ model: figure, el });
  window.__lt = { models, figure, frame, paints, bytes, red, blue, img: () => el.querySelector('img') };
}
"""


def _png(colour: tuple[int, int, int]) -> str:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (40, 30), colour).save(buffer, "PNG")
    return base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture()
def page(browser):
    page = browser.new_page()
    try:
        page.set_content("<html><body></body></html>")
        page.evaluate(PAGE, [ESM_PATH.read_text(encoding="utf-8"), _png((220, 30, 30)), _png((30, 30, 220))])
        page.wait_for_function("() => window.__lt.paints.length >= 1")       # the first frame, over red
        yield page
    finally:
        page.close()


def _settle(page) -> None:
    page.evaluate("() => new Promise((done) => setTimeout(done, 150))")


def test_a_frame_listed_before_its_new_background_is_painted_over_that_background(page):
    """A kernel's set lists its attributes in a Python set's order: frame first, then the background drawn with
    it. Painted at once, the frame's curves stood over the old axes until the new background was decoded."""
    page.evaluate("""() => { const { models, figure, frame, bytes, blue } = window.__lt;
                             models.c.set('value', 76);
                             figure.setState({ frame: frame(76), background: bytes(blue) }); }""")
    _settle(page)
    paints = page.evaluate("() => window.__lt.paints")
    assert [p["colour"] for p in paints] == ["red", "blue"], paints
    assert not [p for p in paints if p["behind"] or p["stale"]], paints


def test_the_background_first_order_paints_the_same(page):
    page.evaluate("""() => { const { models, figure, frame, bytes, blue } = window.__lt;
                             models.c.set('value', 76);
                             figure.setState({ background: bytes(blue), frame: frame(76) }); }""")
    _settle(page)
    paints = page.evaluate("() => window.__lt.paints")
    assert [p["colour"] for p in paints] == ["red", "blue"], paints
    assert not [p for p in paints if p["behind"] or p["stale"]], paints


def _send_predictions(page) -> None:
    """The kernel's frames computed ahead: the control at 76 (with its readout R76); the page then watches the
    readout's model (fetched from the widget manager, a promise)."""
    page.evaluate("""() => { const { figure } = window.__lt;
        const empty = new DataView(new ArrayBuffer(0));
        figure.trigger('msg:custom', { ahead: { base: { c: '61' }, attrs: { c: 'value' }, readout: 'r',
            frames: { c: { '76': { ops: [], buffer: 0, alt: 'A76', readout: 'R76' } } },
            current: { ops: [], buffer: 0, alt: 'A61', readout: 'R61' } } }, [empty]); }""")
    _settle(page)


def _steps(page, steps) -> list[list[str]]:
    """Each step a task of its own (as each kernel message is); after each, the table and the alt text shown."""
    return [page.evaluate(f"""() => {{ const {{ models, figure, frame, bytes, blue }} = window.__lt; {step};
                                      return [models.r.get('value'), window.__lt.img().alt]; }}""") for step in steps]


def test_a_superseded_frames_readout_never_shows_after_a_newer_predicted_one(page):
    """A drag lands on 76, predicted and shown at once (readout R76). The kernel is still behind: its frame for
    61 comes (dropped), then its readout R61 (put back to R76), then its frame for 76. The table must stay on
    R76: it once showed R61 beside the picture for 76 until the kernel's R76 came."""
    _send_predictions(page)
    shown = _steps(page, ["models.c.set('value', 76)",                           # the predicted frame, at once
                          "figure.setState({ frame: frame(61), alt: 'K61' })",   # the kernel's frame for 61: dropped
                          "models.r.set('value', 'R61')",                        # ... and its readout: put back
                          "figure.setState({ frame: frame(76), alt: 'K76' })",   # the kernel's frame for 76
                          "models.r.set('value', 'R76')"])                       # ... and its readout
    assert [readout for readout, _ in shown] == ["R76"] * 5, shown
    # a dropped frame's text alternative is dropped with it (A: predicted, K: the kernel's)
    assert [alt for _, alt in shown] == ["A76", "A76", "A76", "K76", "K76"], shown
    paints = page.evaluate("() => window.__lt.paints")
    assert [p["ahead"] for p in paints] == [False, True, False], paints
    assert not [p for p in paints if p["stale"] or p["behind"]], paints


def test_a_readout_waits_with_its_frame_for_the_frames_background(page):
    """A frame with new axes waits for its background; its readout, which comes meanwhile, waits with it: the
    table beside the picture on screen is that picture's, then both change together."""
    _send_predictions(page)
    shown = _steps(page, ["models.c.set('value', 90)",                  # not predicted: the kernel's turn
                          # its frame and background, and its readout before the background is decoded
                          "figure.setState({ frame: frame(90), alt: 'A90', background: bytes(blue) }); "
                          "models.r.set('value', 'R90')"])
    assert [readout for readout, _ in shown] == ["R61"] * 2, shown
    _settle(page)
    paints = page.evaluate("() => window.__lt.paints")
    assert [(p["colour"], p["readout"]) for p in paints] == [("red", "R61"), ("blue", "R90")], paints
    assert page.evaluate("() => window.__lt.models.r.get('value')") == "R90"
    assert not [p for p in paints if p["stale"] or p["behind"]], paints
