// The explorers' controls for the keyboard and screen readers (lecture_lib.explorers.sliders): a classic script,
// shown with each explorer through IPython's Javascript display, that installs itself once per page.
(function () {
  if (window.lectureControlsA11y) { window.lectureControlsA11y(); return; }
  const CONTROL = '.widget-slider .noUi-handle, .widget-dropdown select, .widget-slider .widget-readout';
  const sync = () => {
    document.querySelectorAll('.lecture-explorer .widget-slider').forEach((box) => {
      const handle = box.querySelector('.noUi-handle');
      const readout = box.querySelector('.widget-readout');
      if (!handle || !readout) return;
      if (!readout.hasAttribute('data-lecture-watched')) {     // a readout filled after the handle was drawn
        readout.setAttribute('data-lecture-watched', 'true');
        new MutationObserver(sync).observe(readout, {childList: true, characterData: true, subtree: true});
      }
      if (!handle.hasAttribute('data-lm-suppress-shortcuts')) handle.setAttribute('data-lm-suppress-shortcuts', 'true');
      const text = (readout.textContent || readout.value || '').trim();
      const label = ((box.querySelector('.widget-label') || {}).textContent || '').trim();
      const wanted = label ? `${text} (${label})` : text;
      if (text && handle.getAttribute('aria-valuetext') !== wanted) handle.setAttribute('aria-valuetext', wanted);
    });
    document.querySelectorAll('.widget-dropdown select:not([data-lm-suppress-shortcuts])').forEach(
      (select) => select.setAttribute('data-lm-suppress-shortcuts', 'true'));
    // a log slider's readout takes a typed value: Enter hands it to the slider's hidden Text widget
    document.querySelectorAll('.lecture-log-slider .widget-readout:not([data-lecture-typing])').forEach((readout) => {
      const slider = readout.closest('.lecture-log-slider');
      const id = [...slider.classList].find((c) => c.startsWith('lecture-control-'));
      if (!id) return;
      readout.setAttribute('data-lecture-typing', 'true');
      readout.setAttribute('data-lm-suppress-shortcuts', 'true');
      readout.contentEditable = 'true';
      readout.setAttribute('role', 'textbox');
      readout.title = 'type a value and press Enter (3,000 or 500M)';
      let shown = '';
      const submit = () => {
        const input = document.querySelector(`.lecture-typed-${id.slice('lecture-control-'.length)} input`);
        const text = (readout.textContent || '').trim();
        if (!input || !text || text === shown) return;
        input.value = text;
        input.dispatchEvent(new Event('change', {bubbles: true}));
        shown = text;       // sent once: the blur that follows Enter does not send it (and hold the keys) again
        holdKeys(slider.querySelector('.noUi-handle'), input);
      };
      readout.addEventListener('focus', () => { shown = (readout.textContent || '').trim(); });
      // Enter or Escape hands the keyboard back to the slider's handle, so that ← and → move it next (a learner
      // typed 3,000, pressed Enter, then ← twice: with the focus on the page body, the arrows did nothing)
      const toHandle = () => { readout.blur(); const handle = slider.querySelector('.noUi-handle'); if (handle) handle.focus(); };
      readout.addEventListener('keydown', (event) => {
        if (event.key === 'Enter') { event.preventDefault(); submit(); toHandle(); }
        else if (event.key === 'Escape') { readout.textContent = shown; toHandle(); }
        event.stopPropagation();
      });
      readout.addEventListener('blur', submit);
    });
    // A linear or whole-number slider's readout is ipywidgets' own editable number: after Enter (which ipywidgets
    // reads first, on its way up) the keyboard goes back to the handle too, so ← moves the slider, not the caret.
    document.querySelectorAll('.lecture-explorer .widget-slider:not(.lecture-log-slider) .widget-readout:not([data-lecture-typing])')
      .forEach((readout) => {
        readout.setAttribute('data-lecture-typing', 'true');
        readout.addEventListener('keydown', (event) => {
          if (event.key !== 'Enter') return;
          const handle = readout.closest('.widget-slider').querySelector('.noUi-handle');
          setTimeout(() => { readout.blur(); if (handle) handle.focus(); }, 0);
        });
      });
  };
  // Keys pressed on the handle before the kernel has taken a typed value would move the slider from where it was
  // (a learner typed 7,500, pressed Enter and at once ← ←: the typed value or an arrow was lost). They wait for the
  // kernel's answer, the hidden input emptied again (3 s at most), and then move the slider in the order pressed.
  const MOVES = ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'PageUp', 'PageDown', 'Home', 'End'];
  const holdKeys = (handle, input) => {
    if (!handle) return;
    const held = [];
    const keep = (event) => {
      if (!event.isTrusted || !MOVES.includes(event.key)) return;
      held.push(event.key);
      event.preventDefault();
      event.stopImmediatePropagation();
    };
    handle.addEventListener('keydown', keep, true);
    const started = performance.now();
    const answered = () => {
      if (input.value !== '' && performance.now() - started < 3000) { setTimeout(answered, 10); return; }
      handle.removeEventListener('keydown', keep, true);
      requestAnimationFrame(() => held.forEach((key) =>
        handle.dispatchEvent(new KeyboardEvent('keydown', {key, bubbles: true, cancelable: true}))));
    };
    setTimeout(answered, 10);
  };
  window.lectureControlsA11y = sync;
  // Before any key reaches a control, it has the attribute (controls drawn later included).
  document.addEventListener('focusin', (event) => {
    const target = event.target;
    if (target && target.matches && target.matches(CONTROL) && !target.hasAttribute('data-lm-suppress-shortcuts'))
      target.setAttribute('data-lm-suppress-shortcuts', 'true');
  }, true);
  // aria-valuetext changes (noUiSlider rewrites it on every move) and added nodes (a slider drawn
  // detached, then attached, changes no attribute the page can see) ask for one sync per frame, so
  // the rest of the page's DOM churn costs a flag test.
  let queued = false;
  const soon = () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; sync(); });
  };
  new MutationObserver(soon).observe(document.body, {subtree: true, childList: true, attributes: true,
                                                     attributeFilter: ['aria-valuetext']});
  sync();
})();
