// The trajectory page: `trajwatch show`'s timeline in the browser. Steps nested by parent with
// their offset, duration and content (read by kind, the raw JSON a click away), each finding
// marked under the steps its evidence names, the capture gaps and the manifest's claims.
// Plain ES module; every piece of telemetry is set as text.

import { $, apiCall, el, readableWithRaw } from './dom.js';
import { eventView } from './event-view.js';

const main = $('#main');
const key = decodeURIComponent(location.pathname.replace(/^\/trajectories\//, ''));
let token = sessionStorage.getItem('trajwatch.token') ?? '';

const seconds = (ms) => `${(ms / 1000).toFixed(3)}s`;
const SEVERITY = { high: 'bad', medium: 'bad', low: 'warn', info: 'muted' };

function header(v) {
  const state = v.complete ? 'complete' : `incomplete: ${v.incompleteReasons.join(', ')}`;
  return [
    el('h2', { id: 'trajectory-title', text: `Trajectory ${v.key}` }),
    el('p', {
      id: 'trajectory-summary',
      text: `revision ${v.revision} · ${state}${v.closedBy === null ? '' : ` (closed by ${v.closedBy})`} · ${v.steps.length} steps · ${v.findings.length} findings${v.startedAt === null ? '' : ` · started ${v.startedAt}`}`,
    }),
    el('p', { class: 'muted', text: `traces: ${v.traceIds.join(', ')}` }),
  ];
}

function claims(v) {
  const gaps = v.captureGaps.map((g) => el('li', { class: 'capture-gap', text: `capture gap: ${g.reason} on ${g.spanIds.length} span(s)` }));
  const notes = (v.manifest?.notes ?? []).map((n) => el('li', { text: `read past: ${n.reason} ×${n.count} (${n.detail})` }));
  const m = v.manifest;
  const fates = {};
  for (const w of m?.windows ?? []) fates[w.fate] = (fates[w.fate] ?? 0) + 1;
  for (const w of m?.windowsOmitted ?? []) fates[w.fate] = (fates[w.fate] ?? 0) + w.count;
  return el(
    'section',
    { id: 'claims', 'aria-labelledby': 'claims-title' },
    el('h3', { id: 'claims-title', text: 'What the analysis claims' }),
    gaps.length + notes.length === 0 ? el('p', { class: 'muted', text: 'No capture gaps.' }) : el('ul', { id: 'capture-gaps' }, ...gaps, ...notes),
    m === null
      ? el('p', { class: 'muted', id: 'no-manifest', text: 'No analysis manifest for this revision in findings.jsonl.' })
      : el(
          'div',
          {},
          el(
            'table',
            { id: 'manifest-checks', 'aria-label': 'Checks' },
            el('thead', {}, el('tr', {}, ...['Check', 'Status', 'Findings', 'Why'].map((h) => el('th', { scope: 'col', text: h })))),
            el(
              'tbody',
              {},
              ...m.checks.map((c) =>
                el(
                  'tr',
                  { 'data-check': c.check },
                  el('td', { text: c.check }),
                  el('td', {
                    class: c.status === 'fired' || c.status === 'observed' ? 'disagree' : c.status === 'unavailable' ? 'muted' : 'agree',
                    text: c.status,
                  }),
                  el('td', { text: String(c.finding_count) }),
                  el('td', { text: [c.reason, c.detail].filter((x) => x !== undefined && x !== '').join(': ') || '-' }),
                ),
              ),
            ),
          ),
          el('p', {
            id: 'manifest-judge',
            text: `Judge ${m.judge ?? 'not recorded'}; windows: ${
              Object.entries(fates)
                .map(([f, n]) => `${n} ${f}`)
                .join(', ') || 'none asked for'
            }.`,
          }),
        ),
  );
}

function marker(f, first) {
  return el(
    'div',
    { class: `finding-marker sev-${SEVERITY[f.severity] ?? 'muted'}`, 'data-finding': f.id, id: first ? `finding-${f.id}` : null },
    el('a', { href: `#finding-${f.id}`, class: 'finding-link', 'aria-label': `finding ${f.id}`, text: '▲' }),
    ' ',
    el('strong', { text: `${f.severity ?? '?'} ${f.area}` }),
    `: ${f.claim}`,
  );
}

function timeline(v) {
  const byId = new Map(v.findings.map((f) => [f.id, f]));
  const shown = new Set();
  const total = Math.max(1, ...v.steps.map((s) => s.offsetMs + s.durationMs));
  const rows = v.steps.map((s) => {
    const view = eventView(s.content);
    const bar = el('span', { class: 'bar', 'aria-hidden': 'true' });
    bar.style.marginLeft = `${(100 * s.offsetMs) / total}%`;
    bar.style.width = `${Math.max(0.4, (100 * s.durationMs) / total)}%`;
    const head = el(
      'summary',
      { class: 'step-head' },
      el('span', { class: 'offset', text: `+${seconds(s.offsetMs)}` }),
      el('span', { class: 'duration', text: seconds(s.durationMs) }),
      el('span', { class: `kind kind-${s.kind}`, text: s.kind }),
      el('span', { class: 'step-title', text: view.title }),
      view.status === 'error' ? el('span', { class: 'badge bad', text: 'error' }) : null,
      el('span', { class: 'timebar', title: `+${seconds(s.offsetMs)} for ${seconds(s.durationMs)}` }, bar),
    );
    const li = el(
      'li',
      {
        class: `step kind-${s.kind}${view.status === 'error' ? ' failed' : ''}`,
        id: `step-${s.id}`,
        'data-step': s.id,
        'data-parent': s.parentId,
        'data-depth': String(s.depth),
      },
      el('details', { class: 'step-body' }, head, ...readableWithRaw(s.id, view, false)),
      ...s.findingIds.map((id) => {
        const m = marker(byId.get(id), !shown.has(id));
        shown.add(id);
        return m;
      }),
    );
    li.style.marginLeft = `${Math.min(s.depth, 12) * 1.25}rem`;
    return li;
  });
  return el(
    'section',
    { 'aria-labelledby': 'timeline-title' },
    el('h3', { id: 'timeline-title', text: 'Timeline' }),
    el('p', { class: 'help', text: 'Open a step for its content; each ▲ is a finding whose evidence names the step above it.' }),
    el('ol', { id: 'timeline' }, ...rows),
  );
}

function elsewhere(v) {
  if (v.elsewhere.length === 0) return null;
  const byId = new Map(v.findings.map((f) => [f.id, f]));
  return el(
    'section',
    { id: 'elsewhere' },
    el('h3', { text: 'Findings naming no step of this revision' }),
    ...v.elsewhere.map((id) => marker(byId.get(id), true)),
  );
}

async function load() {
  $('#alert').textContent = '';
  try {
    const { body: config } = await apiCall('/api/config');
    if (config.authRequired && token === '') {
      $('#token-field').hidden = false;
      main.replaceChildren(el('p', { text: 'Enter the token above to open this trajectory.' }));
      return;
    }
    const { body: v } = await apiCall(`/api/trajectories/${encodeURIComponent(key)}`, {}, token);
    document.title = `trajwatch trajectory ${v.key}`;
    main.replaceChildren(...header(v), claims(v), timeline(v), ...[elsewhere(v)].filter((x) => x !== null));
    const target = location.hash.startsWith('#finding-') ? document.getElementById(location.hash.slice(1)) : null;
    if (target !== null) {
      target.closest('details')?.setAttribute('open', '');
      target.scrollIntoView({ block: 'center' });
      target.classList.add('target');
    }
  } catch (err) {
    if (err.status === 401) $('#token-field').hidden = false;
    main.replaceChildren(
      el('p', {
        id: 'not-found',
        text: err.status === 401 ? 'The token was refused: enter the token above.' : `Could not open trajectory ${key}: ${err.message}`,
      }),
    );
  }
}

$('#token-go').addEventListener('click', () => {
  token = $('#token').value.trim();
  sessionStorage.setItem('trajwatch.token', token);
  load();
});

load();
