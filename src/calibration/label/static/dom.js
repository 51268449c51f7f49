// What the label page and the trajectory page share: building elements (text is always set as
// text, never parsed as HTML), calling this server's API, and drawing a readable event with
// its raw JSON one click away. Plain ES module, no build step.

export const $ = (sel) => document.querySelector(sel);

/** An element; attributes false/null/undefined are left out, `text` sets textContent, `on*` adds a listener; null children are skipped. */
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

/** This server's API; a refusal throws with the server's message, `status` and `code`. */
export async function apiCall(path, init = {}, token = '') {
  const headers = { ...(init.headers ?? {}) };
  if (token !== '') headers.authorization = `Bearer ${token}`;
  const res = await fetch(path, { ...init, headers });
  const body = await res.json().catch(() => ({ error: 'bad-response', message: `HTTP ${res.status}` }));
  if (!res.ok) {
    const err = new Error(body.message ?? `HTTP ${res.status}`);
    err.status = res.status;
    err.code = body.error;
    throw err;
  }
  return { status: res.status, body };
}

/** A trajectory key (or a trace id) as a link to its timeline page, served beside the label pages. */
export function trajectoryLink(key, text = key) {
  return el('a', { href: `/trajectories/${encodeURIComponent(key)}`, class: 'trajectory-link', text });
}

export function renderSection(s) {
  const body =
    s.messages !== undefined
      ? el(
          'ol',
          { class: 'messages' },
          ...s.messages.map((m) =>
            el(
              'li',
              { class: `message role-${m.role}` },
              el('span', { class: 'role', text: m.role }),
              m.text === '' ? null : el('div', { class: 'message-text', text: m.text }),
              ...m.toolCalls.map((c) =>
                el(
                  'div',
                  { class: 'tool-call' },
                  el('span', { class: 'tool-name', text: `calls ${c.name}` }),
                  el('pre', { class: 'tool-args', text: c.arguments }),
                ),
              ),
            ),
          ),
        )
      : s.pre
        ? el('pre', { text: s.text })
        : el('p', { class: 'muted', text: s.text });
  return el('div', { class: `section section-${s.label.replace(/\s+/g, '-')}` }, el('div', { class: 'section-label', text: s.label }), body);
}

/**
 * The head (id, title, error badge, the raw toggle), the readable sections and the raw JSON of
 * an `eventView`; `raw`: start with the raw JSON shown.
 */
export function readableWithRaw(id, v, raw) {
  const rawPre = el('pre', { class: 'raw-json', hidden: !raw, text: v.raw });
  const read = el('div', { class: 'read', hidden: raw }, ...v.sections.map(renderSection));
  const toggle = el('button', { type: 'button', class: 'raw-toggle', 'aria-pressed': String(raw), text: raw ? 'read' : 'raw JSON' });
  toggle.addEventListener('click', () => {
    const showRaw = rawPre.hidden;
    rawPre.hidden = !showRaw;
    read.hidden = showRaw;
    toggle.textContent = showRaw ? 'read' : 'raw JSON';
    toggle.setAttribute('aria-pressed', String(showRaw));
  });
  return [
    el(
      'div',
      { class: 'event-head' },
      el('strong', { text: id }),
      ' ',
      el('span', { class: 'event-title', text: v.title }),
      v.status === 'error' ? el('span', { class: 'badge bad', text: 'error' }) : null,
      toggle,
    ),
    read,
    rawPre,
  ];
}
