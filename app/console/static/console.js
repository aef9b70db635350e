// ownsona console: small progressive help. Every page works without it.
'use strict';

document.addEventListener('DOMContentLoaded', () => {
  // Copy buttons: <button data-copy="ID" hidden> copies the value of the input #ID.
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const input = document.getElementById(button.dataset.copy);
    const said = document.querySelector(`[data-copied="${button.dataset.copy}"]`);
    if (!input) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      let ok = false;
      try {
        await navigator.clipboard.writeText(input.value);
        ok = true;
      } catch {
        input.select(); // the owner can copy it by hand
      }
      if (said) said.textContent = ok ? 'Copied to the clipboard.' : 'Selected: copy it with your keyboard.';
    });
  }

  // Lists of memories with checkboxes get a "Select all" checkbox.
  for (const list of document.querySelectorAll('form ul.items')) {
    const boxes = [...list.querySelectorAll('input[type=checkbox][name=id]')];
    if (boxes.length < 2) continue;
    const label = document.createElement('label');
    label.className = 'check';
    const all = document.createElement('input');
    all.type = 'checkbox';
    label.append(all, ' Select all on this page');
    list.before(label);
    all.addEventListener('change', () => { for (const b of boxes) b.checked = all.checked; }); // then the form hears it
  }

  // The bar of actions on a selection says how many memories are selected.
  for (const form of document.querySelectorAll('form')) {
    const count = form.querySelector('[data-selected]');
    if (!count) continue;
    const update = () => {
      const n = form.querySelectorAll('input[type=checkbox][name=id]:checked').length;
      count.textContent = n === 0 ? '(none selected)' : `(${n} selected)`;
    };
    form.addEventListener('change', update);
    update();
  }
});
