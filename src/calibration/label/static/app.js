// The labeling page: plain ES module, no build step, nothing fetched but this server's own API.
// Every piece of window content is set with textContent, never parsed as HTML: it is agent
// telemetry, and may hold anything.

import { eventView } from './event-view.js';

import { $, apiCall, el, readableWithRaw, trajectoryLink } from './dom.js';

const main = $('#main');
/** Replaces the page's content; a null or undefined child (a part not shown) is left out, never written as "null". */
const show = (...nodes) => main.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined));
const state = {
  config: { authRequired: false, blind: true },
  labeler: localStorage.getItem('trajwatch.labeler') ?? '',
  token: sessionStorage.getItem('trajwatch.token') ?? '',
  list: [],
  selected: 0,
  window: null,
  q: 0,
  raw: false,
  correcting: false,
  last: '',
};

function say(text) {
  $('#status').textContent = text;
}
function alarm(text) {
  $('#alert').textContent = text;
}

const api = (path, init = {}) => apiCall(path, init, state.token);

const q = (labeler) => `labeler=${encodeURIComponent(labeler)}`;

async function showList() {
  const { body } = await api(`/api/windows?${q(state.labeler)}`);
  state.list = body.windows;
  const awaiting = state.list.filter((w) => w.labeled < w.questions);
  const firstAwaiting = state.list.indexOf(awaiting[0]);
  state.selected = Math.min(Math.max(firstAwaiting, 0), Math.max(state.list.length - 1, 0));
  show(
    el('h2', { id: 'list-title', text: `Judged windows: ${awaiting.length} awaiting your labels, ${state.list.length} in all` }),
    state.list.length === 0 && body.why ? el('p', { id: 'empty-why', text: body.why }) : null,
    body.notStored > 0
      ? el('p', {
          class: 'muted',
          text: `${body.notStored} judged windows are not held for labeling (judged before the store existed, or past its retention).`,
        })
      : null,
    el(
      'p',
      { class: 'help' },
      'Move with ',
      el('kbd', { text: 'j' }),
      '/',
      el('kbd', { text: 'k' }),
      ' or the arrow keys, open with ',
      el('kbd', { text: 'Enter' }),
      '; ',
      el('kbd', { text: 'r' }),
      ' opens the review.',
    ),
    el(
      'table',
      { 'aria-labelledby': 'list-title', id: 'windows' },
      el('thead', {}, el('tr', {}, ...['Window', 'Layer', 'Trajectory', 'Events', 'Labeled by you', 'Judge'].map((h) => el('th', { scope: 'col', text: h })))),
      el(
        'tbody',
        {},
        ...state.list.map((w, i) =>
          el(
            'tr',
            { 'data-window': w.windowId, 'aria-current': String(i === state.selected) },
            el('td', {}, el('a', { href: `#/w/${w.windowId}`, 'data-index': i, text: w.windowId })),
            el('td', { text: w.kind }),
            el('td', {}, trajectoryLink(w.trajectoryKey)),
            el('td', { text: String(w.events) }),
            el('td', { text: `${w.labeled} of ${w.questions}` }),
            el('td', { text: w.failed ? 'call failed (no answer)' : 'answered' }),
          ),
        ),
      ),
    ),
  );
  focusRow();
}

function focusRow() {
  const rows = main.querySelectorAll('#windows tbody tr');
  rows.forEach((r, i) => r.setAttribute('aria-current', String(i === state.selected)));
  rows[state.selected]?.querySelector('a')?.focus();
}

async function showWindow(id) {
  const { body } = await api(`/api/windows/${encodeURIComponent(id)}?${q(state.labeler)}`);
  state.window = body;
  state.correcting = false;
  state.last = '';
  const next = body.questions.findIndex((x) => x.label === null);
  state.q = next === -1 ? 0 : next;
  renderWindow();
}

function renderWindow() {
  const w = state.window;
  const question = w.questions[state.q];
  const events = el(
    'section',
    { 'aria-labelledby': 'events-title', class: state.raw ? 'events-pane raw' : 'events-pane' },
    el('h2', { id: 'events-title' }, `Window ${w.windowId} (${w.kind}, trajectory `, trajectoryLink(w.trajectoryKey), ') — the events the judge saw'),
    el(
      'p',
      { class: 'help' },
      el('kbd', { text: 'v' }),
      state.raw ? ' shows the events read by kind' : ' shows every event as the raw JSON the judge was sent',
    ),
    w.limitations.length > 0 ? el('p', { class: 'muted', text: `Limitations: ${w.limitations.join(', ')}` }) : null,
    w.redactions > 0 ? el('p', { class: 'muted', text: `${w.redactions} secrets were redacted before the judge saw this window.` }) : null,
    w.failure !== null ? el('p', { class: 'muted', text: `The judge's call failed (${w.failure}): it gave no answer.` }) : null,
    el('ol', { class: 'events', 'aria-label': 'Events' }, ...w.events.map(renderEvent)),
  );
  const labeled = question.label;
  const locked = labeled !== null && !state.correcting;
  const form = el(
    'form',
    { id: 'label-form', 'aria-labelledby': 'question-title', onsubmit: (ev) => (ev.preventDefault(), record()) },
    state.last === '' ? null : el('p', { id: 'last-recorded', class: 'last' }, state.last),
    el('h2', {
      id: 'question-title',
      text: `Question ${state.q + 1} of ${w.questions.length}: ${question.id}${question.recordOnly ? ' (record-only: scored, never certified)' : ''}`,
    }),
    el('p', { id: 'question-text', text: question.text }),
    el(
      'fieldset',
      {},
      el('legend', { text: 'Your answer' }),
      ...question.options.map((o) =>
        el(
          'div',
          {},
          el('input', { type: 'radio', name: 'label', id: `opt-${o.value}`, value: o.value, checked: labeled?.label === o.value, disabled: locked }),
          ' ',
          el('label', { for: `opt-${o.value}` }, el('kbd', { text: KEY_OF[o.value] ?? '' }), ` ${o.value} — ${o.meaning}`),
        ),
      ),
    ),
    el(
      'fieldset',
      {},
      el('legend', { text: 'Supporting event' }),
      el(
        'label',
        { for: 'support', class: 'help' },
        'the event that supports your answer (',
        el('kbd', { text: 's' }),
        ' focuses, or ',
        el('kbd', { text: '1' }),
        '–',
        el('kbd', { text: '9' }),
        ')',
      ),
      el(
        'select',
        { id: 'support', name: 'support', disabled: locked },
        el('option', { value: '', text: '(none given)' }),
        ...w.events.map((e) => el('option', { value: e.id, text: e.id, selected: labeled?.support === e.id })),
        el('option', { value: 'unresolved', text: 'unresolved (no single event)', selected: labeled?.support === 'unresolved' }),
      ),
    ),
    labeled === null
      ? el('button', { type: 'submit', id: 'record' }, 'Record label (', el('kbd', { text: 'Enter' }), ')')
      : state.correcting
        ? el(
            'div',
            {},
            el('p', {
              id: 'recorded',
              text: `Correcting your label "${labeled.label}"${labeled.support ? ` (support ${labeled.support})` : ''}: the new one supersedes it; both stay in the gold file.`,
            }),
            el('button', { type: 'submit', id: 'record' }, 'Record correction (', el('kbd', { text: 'Enter' }), ')'),
          )
        : el(
            'div',
            {},
            el('p', {
              id: 'recorded',
              text: `You labeled this "${labeled.label}"${labeled.support ? ` (support ${labeled.support})` : ''}${labeled.corrected ? ', a correction' : ''}.`,
            }),
            el('button', { type: 'button', id: 'correct', onclick: () => startCorrection() }, 'Correct this label (', el('kbd', { text: 'c' }), ')'),
          ),
    judgeView(question),
    el(
      'p',
      { class: 'help' },
      el('kbd', { text: '[' }),
      ' / ',
      el('kbd', { text: ']' }),
      ' previous / next question · ',
      el('kbd', { text: 'Esc' }),
      ' back to the list',
    ),
  );
  show(el('div', { class: 'layout' }, events, form));
  highlightSupport();
  const first = form.querySelector('input[name=label]:checked') ?? form.querySelector('input[name=label]');
  first?.focus();
}

/** One event, read by kind, with its raw JSON one click (or `v`) away. */
function renderEvent(e) {
  const v = eventView(e.content);
  return el(
    'li',
    { class: `event kind-${v.kind}${v.status === 'error' ? ' failed' : ''}`, id: `event-${e.id}`, 'data-event': e.id },
    ...readableWithRaw(e.id, v, state.raw),
  );
}

function toggleRaw() {
  state.raw = !state.raw;
  renderWindow();
  say(state.raw ? 'Showing the raw JSON of every event.' : 'Showing the events read by kind.');
}

function startCorrection() {
  state.correcting = true;
  renderWindow();
  say('Correcting: choose the right answer and record it; the first label stays in the gold file, superseded.');
}

function judgeView(question) {
  if (question.judge === 'hidden') return el('p', { id: 'judge', class: 'muted', text: "The judge's answer is hidden until you record yours." });
  const j = question.judge;
  const mine = question.label?.label;
  const text =
    j.option === null
      ? `The judge gave no answer (${j.failure}).`
      : `The judge answered "${j.option}"${j.support ? ` (support ${j.support})` : ''}${j.probabilities?.[j.option] !== undefined ? `, p = ${j.probabilities[j.option].toFixed(3)}` : ''}.`;
  const verdict =
    mine === undefined ? '' : mine === 'unsure' ? ' Your "unsure" is excluded from calibration.' : mine === j.option ? ' You agree.' : ' You disagree.';
  return el('p', { id: 'judge', class: mine === undefined || mine === 'unsure' ? '' : mine === j.option ? 'agree' : 'disagree', text: text + verdict });
}

function highlightSupport() {
  const v = $('#support')?.value;
  for (const e of main.querySelectorAll('.event')) e.classList.toggle('chosen', e.dataset.event === v);
}

async function record() {
  const w = state.window;
  const question = w.questions[state.q];
  if (question.label !== null && !state.correcting) return nextQuestion(1);
  const correction = question.label !== null;
  const picked = main.querySelector('input[name=label]:checked');
  if (picked === null) return alarm('Choose an answer first (y, n, u or a).');
  const support = $('#support').value === '' ? null : $('#support').value;
  try {
    const { body } = await api('/api/labels', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        windowId: w.windowId,
        questionId: question.id,
        label: picked.value,
        support,
        labeler: state.labeler,
        ...(correction ? { correction: true } : {}),
      }),
    });
    alarm('');
    state.correcting = false;
    question.label = { label: body.row.label, support: body.row.support, labeledAt: body.row.labeledAt, corrected: body.row.supersedes !== undefined };
    question.judge = body.judge;
    const next = w.questions.findIndex((x) => x.label === null);
    // Said where the labeler is looking (the question panel, which stays in view), and to a screen reader.
    state.last = `${body.result === 'corrected' ? 'Corrected' : 'Recorded'} ${question.id}: ${body.row.label}. ${judgeView(question).textContent}${next === -1 ? ` All ${w.questions.length} questions of this window are labeled.` : ''}`;
    say(state.last);
    if (next !== -1 && !correction) state.q = next;
    renderWindow();
  } catch (err) {
    alarm(`Not recorded: ${err.message}`);
  }
}

function nextQuestion(step) {
  const n = state.window.questions.length;
  state.correcting = false;
  state.q = (state.q + step + n) % n;
  renderWindow();
}

async function showReview() {
  const { body } = await api('/api/review');
  const rows = body.questions.filter((x) => x.n > 0 || x.excludedGold > 0);
  show(
    el('h2', { text: `Review: agreement with the judge so far (minimum kappa ${body.minKappa})` }),
    el('p', {
      class: 'help',
      text: 'The same computation as trajwatch calibrate. Kappa measures label agreement; it says nothing about whether the probabilities are reliable (see trajwatch reliability).',
    }),
    rows.length === 0 ? el('p', { text: 'No labels yet.' }) : null,
    ...rows.map((x) =>
      el(
        'section',
        { class: 'review-question', 'data-question': x.target.questionId },
        el('h3', { text: `${x.target.questionId} (${x.target.windowKind ?? '-'} windows, model ${x.target.servedModel ?? '-'})` }),
        el('p', {
          text: `n = ${x.n}, excluded (unsure) = ${x.excludedGold}, agreement = ${fmt(x.agreement)}, kappa = ${fmt(x.kappa)}${x.kappaInterval ? ` (95 % interval ${fmt(x.kappaInterval.lower)} to ${fmt(x.kappaInterval.upper)})` : ''} — ${x.qualifies ? 'would qualify for a certificate' : `does not qualify: ${x.reasons.join('; ')}`}`,
        }),
        x.disagreements.length === 0
          ? el('p', { class: 'agree', text: 'No disagreements.' })
          : el(
              'table',
              { 'aria-label': `Disagreements on ${x.target.questionId}` },
              el('thead', {}, el('tr', {}, ...['Window', 'Label', 'Judge', 'Judge support', 'Labeler'].map((h) => el('th', { scope: 'col', text: h })))),
              el(
                'tbody',
                {},
                ...x.disagreements.map((d) =>
                  el(
                    'tr',
                    { class: 'disagree' },
                    el('td', {}, el('a', { href: `#/w/${d.windowId}`, text: d.windowId })),
                    el('td', { text: d.gold }),
                    el('td', { text: d.predicted }),
                    el('td', { text: d.support ?? '-' }),
                    el('td', { text: d.source }),
                  ),
                ),
              ),
            ),
      ),
    ),
    body.conflictingGold.length > 0
      ? el('p', { class: 'disagree', text: `Labelers disagree on ${body.conflictingGold.length} (question, window) pairs; calibration refuses those pairs.` })
      : null,
  );
  main.focus();
}

function showKeys() {
  const keys = [
    ['j / ↓, k / ↑', 'move in the window list'],
    ['Enter', 'open the window; record the label'],
    ['y, n, u, a', 'answer yes, no, unsure, unavailable'],
    ['1–9, 0', 'supporting event 1–9; 0: unresolved'],
    ['s', 'focus the supporting event list'],
    ['v', 'the events as raw JSON, or read by kind'],
    ['c', 'correct a label you recorded (a new line supersedes it)'],
    ['[ , ]', 'previous, next question'],
    ['Esc', 'back to the list'],
    ['r', 'the review'],
    ['?', 'this list'],
  ];
  show(
    el('h2', { text: 'Keys' }),
    el('table', {}, el('tbody', {}, ...keys.map(([k, v]) => el('tr', {}, el('th', { scope: 'row', text: k }), el('td', { text: v }))))),
  );
  main.focus();
}

/** The key that picks each option: its first letter, but `a` for unavailable (`u` is unsure). */
const KEY_OF = { yes: 'y', no: 'n', unsure: 'u', unavailable: 'a' };

const fmt = (x) => (x === null ? 'n/a' : x.toFixed(3));

async function route() {
  alarm('');
  if (state.labeler === '') {
    show(el('p', { text: 'Enter your labeler id above to start.' }));
    $('#labeler').focus();
    return;
  }
  const hash = location.hash || '#/';
  try {
    const m = /^#\/w\/(.+)$/.exec(hash);
    if (m !== null) await showWindow(decodeURIComponent(m[1]));
    else if (hash === '#/review') await showReview();
    else if (hash === '#/keys') showKeys();
    else await showList();
  } catch (err) {
    alarm(err.status === 401 ? 'The token was refused: enter the token above.' : `Could not load: ${err.message}`);
  }
}

document.addEventListener('keydown', (ev) => {
  if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const inText = ev.target instanceof HTMLInputElement && (ev.target.type === 'text' || ev.target.type === 'password' || ev.target.id === 'labeler');
  if (inText) return;
  const inWindow = /^#\/w\//.test(location.hash) && state.window !== null && $('#label-form') !== null;
  if (ev.key === 'Escape') {
    location.hash = '#/';
    return ev.preventDefault();
  }
  if (inWindow) {
    const option = Object.keys(KEY_OF).find((o) => KEY_OF[o] === ev.key);
    const radio = option && $(`#opt-${option}`);
    if (radio && !radio.disabled) {
      radio.checked = true;
      radio.focus();
      return ev.preventDefault();
    }
    if (/^[0-9]$/.test(ev.key) && ev.target.id !== 'support') {
      const sel = $('#support');
      if (sel.disabled) return;
      const value = ev.key === '0' ? 'unresolved' : state.window.events[Number(ev.key) - 1]?.id;
      if (value !== undefined) {
        sel.value = value;
        highlightSupport();
        say(`Supporting event: ${value}`);
      }
      return ev.preventDefault();
    }
    if (ev.key === 's') {
      $('#support').focus();
      return ev.preventDefault();
    }
    if (ev.key === 'v') {
      toggleRaw();
      return ev.preventDefault();
    }
    if (ev.key === 'c' && $('#correct') !== null) {
      startCorrection();
      return ev.preventDefault();
    }
    if (ev.key === '[' || ev.key === ']') {
      nextQuestion(ev.key === ']' ? 1 : -1);
      return ev.preventDefault();
    }
    if (ev.key === 'Enter' && ev.target.tagName !== 'BUTTON') {
      record();
      return ev.preventDefault();
    }
    return;
  }
  if (location.hash === '' || location.hash === '#/') {
    if (ev.key === 'j' || ev.key === 'ArrowDown' || ev.key === 'k' || ev.key === 'ArrowUp') {
      const step = ev.key === 'j' || ev.key === 'ArrowDown' ? 1 : -1;
      state.selected = Math.min(Math.max(state.selected + step, 0), Math.max(state.list.length - 1, 0));
      focusRow();
      return ev.preventDefault();
    }
  }
  if (ev.key === '?') {
    location.hash = '#/keys';
    return ev.preventDefault();
  }
  if (ev.key === 'r') {
    location.hash = '#/review';
    return ev.preventDefault();
  }
});

document.addEventListener('change', (ev) => {
  if (ev.target.id === 'support') highlightSupport();
});

$('#who').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const labeler = $('#labeler').value.trim();
  if (!/^[A-Za-z0-9._@+-]{1,64}$/.test(labeler)) return alarm('A labeler id is 1–64 of A–Z a–z 0–9 . _ @ + -');
  state.labeler = labeler;
  localStorage.setItem('trajwatch.labeler', labeler);
  if (state.config.authRequired) {
    state.token = $('#token').value.trim();
    sessionStorage.setItem('trajwatch.token', state.token);
  }
  say(`Labeling as ${labeler}.`);
  route();
});

window.addEventListener('hashchange', route);

const { body: config } = await api('/api/config');
state.config = config;
$('#token-field').hidden = !config.authRequired;
$('#labeler').value = state.labeler;
route();
