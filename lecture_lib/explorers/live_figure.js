// The live figure: the still background as an <img class="lecture-figure"> (its alt text is the
// figure's description) and the moving artists painted on a canvas over it from recorded operations
// (lecture_lib/explorers/live_figure.py records them and loads this module into anywidget).
// matplotlib's path codes; any other code the recorder sends is LINETO (2)
const MOVETO = 1, CLOSEPOLY = 79;

function buildPath(view, offset, count, dx = 0, dy = 0) {
  const path = new Path2D();
  for (let i = offset; i < offset + count; i++) {
    const code = view.getFloat32(12 * i, true);
    const x = view.getFloat32(12 * i + 4, true) + dx, y = view.getFloat32(12 * i + 8, true) + dy;
    if (code === MOVETO) path.moveTo(x, y);
    else if (code === CLOSEPOLY) path.closePath();
    else path.lineTo(x, y);
  }
  return path;
}

const hatchTiles = new Map();
function hatchPattern(ctx, op, figureHeight) {
  // Agg tiles a hatch over one inch (op.hs px) with 6 lines per repeated character, as matplotlib does.
  const key = [op.h, op.hc, op.hw, op.hs].join('|');
  if (!hatchTiles.has(key)) {
    const size = Math.max(4, Math.round(op.hs));
    const tile = document.createElement('canvas');
    tile.width = tile.height = size;
    const t = tile.getContext('2d');
    t.strokeStyle = t.fillStyle = op.hc;
    t.lineWidth = op.hw || 1;
    const count = (ch) => op.h.split('').filter((c) => c === ch).length;
    const lines = (n, draw) => { for (let k = -n; k <= 2 * n; k++) draw(k * size / n); };
    const n = (ch) => Math.max(1, 6 * count(ch));
    t.beginPath();
    if (count('/') || count('x') || count('X')) lines(n('/') + 6 * (count('x') + count('X')), (o) => { t.moveTo(o, size); t.lineTo(o + size, 0); });
    if (count('\\') || count('x') || count('X')) lines(n('\\') + 6 * (count('x') + count('X')), (o) => { t.moveTo(o, 0); t.lineTo(o + size, size); });
    if (count('|') || count('+')) lines(n('|') + 6 * count('+'), (o) => { t.moveTo(o, 0); t.lineTo(o, size); });
    if (count('-') || count('+')) lines(n('-') + 6 * count('+'), (o) => { t.moveTo(0, o); t.lineTo(size, o); });
    t.stroke();
    const dots = count('.') + count('o') + count('O');
    if (dots) { const k = 3 * dots, r = Math.max(0.8, size / k / 6);
      for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) { t.beginPath(); t.arc((i + 0.5) * size / k, (j + 0.5) * size / k, r, 0, 2 * Math.PI); t.fill(); } }
    hatchTiles.set(key, tile);
  }
  const pattern = ctx.createPattern(hatchTiles.get(key), 'repeat');
  // Agg starts its tiles at the figure's bottom-left corner; the canvas at its top-left
  const size = hatchTiles.get(key).height;
  pattern.setTransform(new DOMMatrix().translate(0, figureHeight % size));
  return pattern;
}

function paint(ctx, op, path, figureHeight) {
  if (op.f) { ctx.fillStyle = op.f; ctx.fill(path); }
  if (op.h) { ctx.fillStyle = hatchPattern(ctx, op, figureHeight); ctx.fill(path); }
  if (op.s) {
    ctx.strokeStyle = op.s; ctx.lineWidth = op.w; ctx.lineCap = op.cap || 'butt'; ctx.lineJoin = op.join || 'miter';
    ctx.setLineDash(op.d || []); ctx.lineDashOffset = op.do || 0;
    ctx.stroke(path);
  }
}

function draw(ctx, canvas, frame, view, scale, figureHeight, backdrop = null) {
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  // operations are in the figure's pixels; the canvas has the screen's (sharp curves on a high-DPI
  // screen even where the background PNG is drawn at 1x)
  ctx.setTransform(scale, 0, 0, scale, 0, 0);
  // a frame predicted with new axes brings its own background: drawn under its artists, over the <img>
  if (backdrop) ctx.drawImage(backdrop, 0, 0, backdrop.width, backdrop.height);
  for (const op of frame.ops || []) {
    ctx.save();
    if (op.clip) { ctx.beginPath(); ctx.rect(op.clip[0], op.clip[1], op.clip[2], op.clip[3]); ctx.clip(); }
    if (op.cp) ctx.clip(buildPath(view, op.cp[0], op.cp[1]));
    if (op.k === 'p') paint(ctx, op, buildPath(view, op.o, op.n), figureHeight);
    else if (op.k === 'm') {
      for (let i = op.po; i < op.po + op.pn; i++) {
        const x = view.getFloat32(12 * i + 4, true), y = view.getFloat32(12 * i + 8, true);
        paint(ctx, op, buildPath(view, op.o, op.n, x, y), figureHeight);
      }
    } else if (op.k === 't') {
      ctx.font = op.font; ctx.fillStyle = op.c; ctx.textBaseline = 'alphabetic';
      ctx.translate(op.x, op.y); ctx.rotate(-op.a * Math.PI / 180);
      const measured = ctx.measureText(op.s).width;
      // matplotlib placed the text for its own font's width: keep the browser's font inside it
      if (measured > op.tw && op.tw > 0) ctx.scale(op.tw / measured, 1);
      ctx.fillText(op.s, 0, 0);
    }
    ctx.restore();
  }
}

function render({ model, el }) {
  const box = document.createElement('div');
  box.className = 'lecture-live-figure';
  box.style.position = 'relative';
  box.style.lineHeight = '0';
  const img = document.createElement('img');
  img.className = 'lecture-figure';
  const canvas = document.createElement('canvas');
  canvas.setAttribute('aria-hidden', 'true');
  canvas.style.position = 'absolute';
  canvas.style.left = '0';
  canvas.style.top = '0';
  canvas.style.pointerEvents = 'none';
  box.append(img, canvas);
  el.append(box);
  const ctx = canvas.getContext('2d');
  const unhook = [];
  let url = null, waiting = false, frames = 0, predictedFrames = 0;
  // The canvas paints each frame over its own background (decoded from the PNG), so a picture changes in one
  // step: a background that arrives for a frame already superseded never shows under a newer frame's curves.
  // A kernel frame and its new background come in one message, but their change events fire in the order the
  // kernel listed them (a Python set's, which varies from kernel to kernel): a frame whose background came with
  // it waits for setBackground, which paints it once that background is decoded.
  let backdrop = null, backdropData = null, backgrounds = 0, takenBackground = null;

  let scale = 1, height = 1;
  const size = () => {
    const [w, h] = model.get('pixels'), [cw, ch] = model.get('css_size');
    const dpr = Math.min(3, Math.max(1, window.devicePixelRatio || 1));
    canvas.width = Math.round(cw * dpr); canvas.height = Math.round(ch * dpr);
    scale = canvas.width / w; height = h;
    for (const node of [img, canvas]) { node.style.width = cw + 'px'; node.style.height = ch + 'px'; }
    box.style.width = cw + 'px'; box.style.height = ch + 'px';
  };
  const dataView = (buffer) => buffer instanceof DataView ? buffer
    : new DataView(buffer.buffer || buffer, buffer.byteOffset || 0, buffer.byteLength);

  // Every frame carries the controls' positions it was computed for (lecture_lib.explorers.ahead.key): the
  // page paints it while the controls are still there, or, while the hand moves on (a quick flick, a held key),
  // when the hand held its positions more recently than those of the picture on screen: the picture follows the
  // hand a step behind instead of standing still until the kernel catches up (issue 48), and never goes back to a
  // position older than one already shown. Any other frame is dropped.
  const models = new Map();          // control model id -> its model (null while it is fetched)
  // a position as lecture_lib.explorers.ahead.key writes it: a number as JavaScript prints it (12 digits), or
  // for a control moved by index the label there
  const position = (m, attr) => attr === 'index' ? (m.get('_options_labels') || [])[m.get('index')]
    : (typeof m.get(attr) === 'number' ? String(parseFloat(m.get(attr).toPrecision(12))) : String(m.get(attr)));
  const matches = (state) => Object.entries(state.positions).every(([id, key]) => {
    const m = models.get(id);
    return !m || position(m, state.attrs[id]) === key;
  });
  let shownState = null;      // the positions the picture on screen was computed for
  box.__lectureFresh = () => !shownState || matches(shownState);     // read by tests/browser_support.py
  // The hand's history, on one clock that ticks whenever a watched control moves: when each control last left
  // each position. A frame whose positions the controls have left is as recent as the earliest of those leavings;
  // the picture on screen is as recent as shownAge (a frame of the controls' own positions: now).
  let clock = 0, shownAge = -Infinity;
  const left = new Map(), lastKey = new Map();        // control id -> Map(position -> clock), control id -> position
  const age = (state) => {
    let oldest = Infinity;
    for (const [id, key] of Object.entries(state.positions)) {
      const m = models.get(id);
      if (!m || position(m, state.attrs[id]) === key) continue;
      const at = left.has(id) ? left.get(id).get(key) : undefined;
      if (at === undefined) return -Infinity;          // a position not held since the page watched: unknown age
      oldest = Math.min(oldest, at);
    }
    return oldest;
  };
  // a frame the page may paint: the controls' own positions, or newer than the picture on screen
  const acceptable = (state) => !state || matches(state) || age(state) > shownAge;

  const paint = (frame, view, predicted, state, backdrop = null) => {
    const dpr = Math.min(3, Math.max(1, window.devicePixelRatio || 1));
    if (canvas.width !== Math.round(model.get('css_size')[0] * dpr)) size();     // zoomed or moved screens
    const started = performance.now();
    draw(ctx, canvas, frame, view, scale, height, backdrop);
    box.dataset.paintMs = (performance.now() - started).toFixed(2);      // read by tools/bench_browser.py
    box.dataset.frame = String(++frames);
    if (predicted) box.dataset.ahead = String(++predictedFrames);
    shownState = state;
    const fresh = state ? matches(state) : true;
    const lagging = !fresh && age(state) > shownAge;      // a step behind the hand, newer than what it replaces
    shownAge = fresh ? clock + 0.5 : age(state);
    // stale: painted for controls that have moved on since, and not newer than the picture it replaced
    // (tests/test_browser.py counts these: never);
    // behind: a kernel frame painted while the model holds a newer background than the one under it
    const stale = !fresh && !lagging;
    const held = model.get('background');
    const behind = !predicted && Boolean(held && held.byteLength) && held !== backdropData;
    box.dispatchEvent(new CustomEvent('lecture-frame', { bubbles: true,
      detail: { ahead: predicted, stale, lagging, behind, state: state ? state.positions : null } }));
  };

  // Frames computed ahead in the kernel (lecture_lib.explorers.ahead): when a control lands on a position
  // predicted with every other control where it still is, its frame and readout are shown at once.
  // The kernel sends each readout right after its frame, so the frame decides what becomes of it (readoutMode):
  // 'accept' it (the frame was painted), 'hold' it until its frame is painted (the frame waits for its
  // background: pendingReadout), or 'drop' it (the frame was superseded, or a predicted frame was painted since).
  let ahead = null, readoutModel = null, shownReadout = null, readoutMode = 'accept', pendingReadout = null;
  const shelf = [], SHELF = 12;         // frames of earlier bases, by control: see learn()
  const jump = (id, control, attr) => {
    if (!ahead || !ahead.frames[id]) return;
    for (const [other, otherAttr] of Object.entries(ahead.attrs)) {     // every other control where it still is
      if (other === id) continue;
      const m = models.get(other);
      if (!m || position(m, otherAttr) !== ahead.base[other]) return;
    }
    const here = position(control, attr);
    const entry = here === ahead.base[id] ? ahead.current : ahead.frames[id][here];
    const under = entry && (entry.backdrop || (entry.background === undefined ? ahead.backdrop : null));
    if (!under) return;                  // its background is still being decoded: the kernel's frame will do
    img.alt = img.title = entry.alt;
    paint(entry, entry.view, true, { positions: { ...ahead.base, [id]: here }, attrs: ahead.attrs }, under);
    readoutMode = 'drop';             // until the kernel's own frame for this position arrives
    pendingReadout = null;
    shownReadout = entry.readout;
    if (readoutModel) readoutModel.set('value', entry.readout);
  };
  const watch = async (id, attr) => {
    if (models.has(id)) return;
    models.set(id, null);
    const control = await model.widget_manager.get_model(id);
    models.set(id, control);
    lastKey.set(id, position(control, attr));
    const listener = () => {
      const now = position(control, attr), before = lastKey.get(id);
      if (now !== before) {
        if (!left.has(id)) left.set(id, new Map());
        left.get(id).set(before, ++clock);
        lastKey.set(id, now);
      }
      // the hand's value changed (read by tools/bench_flicks.py: a paint older than one already painted is backward)
      box.dispatchEvent(new CustomEvent('lecture-hand', { bubbles: true,
        detail: { control: id, position: position(control, attr) } }));
      jump(id, control, attr);
    };
    control.on('change:' + attr, listener);
    unhook.push(() => control.off('change:' + attr, listener));
  };

  const frameState = (frame) => frame && frame.state ? { positions: frame.state, attrs: frame.attrs } : null;
  const paintFrame = () => {
    const frame = model.get('frame'), state = frameState(frame);
    if (state) for (const id of Object.keys(state.positions)) watch(id, state.attrs[id]);
    if (state && !acceptable(state)) {           // superseded: keep the newer picture, and its readout
      readoutMode = 'drop'; pendingReadout = null; return;
    }
    readoutMode = 'accept';
    if (pendingReadout !== null && readoutModel) {
      shownReadout = pendingReadout;
      pendingReadout = null;
      readoutModel.set('value', shownReadout);
    }
    paint(frame, dataView(model.get('points')), false, state, backdrop);
  };

  const decode = (buffer) => {
    const bytes = ArrayBuffer.isView(buffer) ? new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength) : buffer;
    return createImageBitmap(new Blob([bytes], { type: 'image/png' })).catch(() => null);
  };
  const sameBytes = (a, b) => {
    if (a === b) return true;
    if (!a || !b || a.byteLength !== b.byteLength) return false;
    const x = new Uint8Array(a.buffer || a, a.byteOffset || 0, a.byteLength);
    const y = new Uint8Array(b.buffer || b, b.byteOffset || 0, b.byteLength);
    for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
    return true;
  };
  const learn = async (table, buffers) => {
    const entries = [table.current, ...Object.values(table.frames).flatMap((frames) => Object.values(frames))];
    for (const entry of entries) entry.view = dataView(buffers[entry.buffer]);
    if (ahead && JSON.stringify(ahead.base) === JSON.stringify(table.base)) {
      for (const [id, frames] of Object.entries(table.frames)) ahead.frames[id] = { ...ahead.frames[id], ...frames };
    } else {
      const old = ahead;
      ahead = table;      // the kernel sent it after its frame for the base: the model holds the base's background
      ahead.backgroundData = model.get('background');
      if (ahead.backgroundData === backdropData) ahead.backdrop = backdrop;
      // A control's frames assume only the other controls where they are (and the axes): while it moves
      // itself (a drag, a held key) they stay good, with the old base's frame as one more of its positions
      // (the kernel sends them once). They are shelved, and taken down again whenever the other controls
      // come back to those positions over the same background, pixel for pixel (the same axes: a slider
      // tried, then another, then the first again: its whole track is still there).
      if (old && old.backdrop) {
        for (const [id, frames] of Object.entries(old.frames)) {
          const kept = {};
          for (const [at, entry] of Object.entries({ ...frames, [old.base[id]]: old.current })) {
            if (entry.background === undefined && !entry.backdrop) entry.backdrop = old.backdrop;
            kept[at] = entry;
          }
          const others = JSON.stringify(Object.entries(old.base).filter(([other]) => other !== id).sort());
          const same = shelf.findIndex((item) => item.id === id && item.others === others && sameBytes(item.data, old.backgroundData));
          const earlier = same >= 0 ? shelf.splice(same, 1)[0].frames : {};
          shelf.push({ id, others, data: old.backgroundData, frames: { ...earlier, ...kept } });
        }
        shelf.splice(0, Math.max(0, shelf.length - SHELF));
      }
      for (const item of shelf) {
        if (!sameBytes(item.data, ahead.backgroundData)) continue;
        const others = JSON.stringify(Object.entries(table.base).filter(([other]) => other !== item.id).sort());
        if (others === item.others) ahead.frames[item.id] = { ...item.frames, ...(table.frames[item.id] || {}) };
      }
    }
    for (const [id, attr] of Object.entries(table.attrs)) watch(id, attr);
    const decoded = new Map();          // a predicted background, decoded (once) before it is needed
    for (const entry of entries) {
      if (entry.background === undefined) continue;
      if (!decoded.has(entry.background)) decoded.set(entry.background, decode(buffers[entry.background]));
      decoded.get(entry.background).then((bitmap) => { entry.backdrop = bitmap; });
    }
    if (!readoutModel && table.readout) {
      readoutModel = await model.widget_manager.get_model(table.readout);
      shownReadout = readoutModel.get('value');
      // the kernel's readout follows its frame: taken when that frame was painted, kept for it while it waits
      // for its background, put back (the table on screen stays) when it was dropped
      let restoring = false;
      const guard = () => {
        if (restoring) return;
        const value = readoutModel.get('value');
        if (readoutMode === 'accept') { shownReadout = value; return; }
        if (readoutMode === 'hold') pendingReadout = value;
        if (shownReadout !== null && value !== shownReadout) {
          restoring = true;
          try { readoutModel.set('value', shownReadout); } finally { restoring = false; }
        }
      };
      readoutModel.on('change:value', guard);
      unhook.push(() => readoutModel.off('change:value', guard));
    }
  };
  model.on('msg:custom', (msg, buffers) => { if (msg && msg.ahead) learn(msg.ahead, buffers || []); });

  // The control in the learner's hand (focused, or under the pointer): the kernel predicts its whole track.
  let inHand = null;
  const hold = (event) => {
    const target = event.target && event.target.closest && event.target.closest('[class*="lecture-control-"]');
    if (!target) return;
    const name = [...target.classList].find((c) => c.startsWith('lecture-control-'));
    const id = name && name.slice('lecture-control-'.length);
    if (!id || !models.has(id) || id === inHand) return;
    inHand = id;
    model.send({ ahead: 'hold', control: id });
  };
  for (const type of ['focusin', 'pointerdown', 'pointerover']) {
    document.addEventListener(type, hold, true);
    unhook.push(() => document.removeEventListener(type, hold, true));
  }

  const setBackground = () => {
    const data = takenBackground = model.get('background');
    if (!data || !data.byteLength) return;
    const blob = new Blob([data.buffer ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : data], { type: 'image/png' });
    const next = URL.createObjectURL(blob), token = ++backgrounds;
    waiting = true;       // the kernel's frames wait for their background
    decode(data).then((bitmap) => {
      if (token !== backgrounds) { URL.revokeObjectURL(next); return; }      // a newer one came meanwhile
      backdrop = bitmap; backdropData = data;
      if (ahead && ahead.backgroundData === data) ahead.backdrop = bitmap;
      // the <img> under the canvas: the figure's alt text and title, and its picture before the first frame
      img.onload = () => { if (url && url !== next) URL.revokeObjectURL(url); url = next; };
      img.src = next;
      waiting = false;
      paintFrame();
    });
  };
  // the text alternative comes with its frame: a superseded frame's would describe a picture never shown
  const describe = () => {
    const state = frameState(model.get('frame'));
    if (state && !matches(state) && !(age(state) >= shownAge)) return;     // its frame was painted, or will be
    const text = model.get('alt'); img.alt = text; img.title = text;
  };

  size(); describe(); setBackground();
  model.on('change:pixels', size);
  model.on('change:css_size', size);
  model.on('change:alt', describe);
  model.on('change:background', setBackground);
  model.on('change:frame', () => {
    if (!waiting && model.get('background') === takenBackground) paintFrame();
    else { readoutMode = 'hold'; pendingReadout = null; }       // setBackground paints it once decoded
  });
  model.send({ ahead: 'please' });
  return () => { if (url) URL.revokeObjectURL(url); for (const off of unhook) off(); };
}
export default { render };
