import { readFile, readdir, writeFile, appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { INTERNAL_FIELDS } from '../../../src/findings/audience.ts';
import { GoldStore } from '../../../src/calibration/gold-store.ts';
import { windowStateDigest } from '../../../src/judge/label-windows.ts';
import { readLedger } from '../../../src/judge/ledger/ledger.ts';
import { SEMANTIC_QUESTIONS } from '../../../src/judge/questions.ts';
import { judgeWindows, serveLabels, type Judged } from './label-fixture.ts';
import { rawRequest } from './raw-request.ts';

const Q0 = SEMANTIC_QUESTIONS[0]!.id;
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function setup(o: Parameters<typeof serveLabels>[1] = {}) {
  const j = await judgeWindows([
    ['run-a', true],
    ['run-b', false],
  ]);
  cleanups.push(() => j.model.close());
  const s = await serveLabels(j, o);
  cleanups.push(s.close);
  const ids = (await readdir(j.windows)).map((n) => n.replace(/\.json$/, '')).sort();
  return { j, s, ids };
}

/** A write as the page sends it: with its own origin (a browser sends Origin on every POST). */
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(new URL('/api/labels', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: new URL(url).origin, ...headers },
    body: JSON.stringify(body),
  });
// Replies are read as loose JSON: the assertions say what they must hold.
type Loose = any;
const body = async (r: Response | Promise<Response>): Promise<Loose> => (await r).json();
const gold = async (j: Judged) => (await readFile(j.gold, 'utf8').catch(() => '')).split('\n').filter((l) => l !== '');

/** Every key name anywhere in a JSON value. */
function keysOf(v: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) for (const x of v) keysOf(x, out);
  else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) keysOf(x, out.add(k));
  return out;
}

describe('the label server', () => {
  it('is an internal surface that carries only the judge call failure of the internal fields (no model ids, receipts, ledger keys, certificate ids, policy digests): it shows windows and answers, never findings', async () => {
    const { s, ids } = await setup({ reveal: true });
    const internal = new Set([...INTERNAL_FIELDS.finding, ...INTERNAL_FIELDS.manifest].map((p) => p.split('.').at(-1)!));
    expect(internal.size).toBeGreaterThan(5);
    const replies = [
      await body(fetch(new URL('/api/windows?labeler=ann', s.url))),
      ...(await Promise.all(ids.map((id) => body(fetch(new URL(`/api/windows/${id}?labeler=ann`, s.url)))))),
    ];
    const seen = keysOf(replies);
    expect(seen.size).toBeGreaterThan(5);
    // A reviewer needs to see that (and why) the judge call failed; nothing else internal is sent.
    expect([...seen].filter((k) => internal.has(k))).toEqual(['failure']);
  });

  it('keeps each judged window as the judge saw it: the stored content has the digest the ledger recorded', async () => {
    const { j, ids } = await setup();
    const intents = (await readLedger(j.ledger)).filter((r) => r.type === 'intent');
    expect(ids).toEqual(intents.map((i) => i.window.windowId).sort());
    for (const i of intents) {
      const stored = JSON.parse(await readFile(join(j.windows, `${i.window.windowId}.json`), 'utf8'));
      expect(windowStateDigest(stored)).toBe(i.digests.state);
      expect(stored.events.map((e: { id: string }) => e.id)).toEqual(i.window.eventMap.map((e) => e.id));
    }
  });

  it('is blind by default: no judge answer before this labeler labeled the question, the answer in the reply once recorded', async () => {
    const { s, ids } = await setup();
    const before = await body(fetch(new URL(`/api/windows/${ids[0]}?labeler=ann`, s.url)));
    expect(before.questions.every((q: { judge: unknown }) => q.judge === 'hidden')).toBe(true);
    const r = await post(s.url, { windowId: ids[0], questionId: Q0, label: 'yes', support: 'e2', labeler: 'ann' });
    expect(r.status).toBe(201);
    expect((await body(r)).judge.option).toMatch(/^(yes|no)$/);
    const after = await body(fetch(new URL(`/api/windows/${ids[0]}?labeler=ann`, s.url)));
    expect(after.questions[0].judge.option).toMatch(/^(yes|no)$/);
    expect(after.questions.slice(1).every((q: { judge: unknown }) => q.judge === 'hidden')).toBe(true);
    // Another labeler is still blind to it.
    const other = await body(fetch(new URL(`/api/windows/${ids[0]}?labeler=bob`, s.url)));
    expect(other.questions[0].judge).toBe('hidden');
  });

  it('refuses bad labels with a clear error and writes nothing: unknown window, unknown question, unknown support, malformed body, a conflicting second label', async () => {
    const { j, s, ids } = await setup();
    expect((await post(s.url, { windowId: ids[0], questionId: Q0, label: 'no', support: null, labeler: 'ann' })).status).toBe(201);
    const kept = await gold(j);
    const cases: [unknown, number, string][] = [
      [{ windowId: 'w1_000000000000000000000000', questionId: Q0, label: 'no', support: null, labeler: 'ann' }, 404, 'unknown-window'],
      [{ windowId: ids[0], questionId: 'no.such.question', label: 'no', support: null, labeler: 'ann' }, 404, 'unknown-question'],
      [{ windowId: ids[1], questionId: Q0, label: 'no', support: 'e99', labeler: 'ann' }, 422, 'unknown-support'],
      [{ windowId: ids[1], questionId: Q0, label: 'maybe', support: null, labeler: 'ann' }, 400, 'invalid'],
      [{ windowId: ids[1], questionId: Q0, label: 'no', support: null, labeler: 'has space' }, 400, 'invalid'],
      [{ windowId: ids[0], questionId: Q0, label: 'yes', support: null, labeler: 'ann' }, 409, 'conflict'],
    ];
    for (const [input, status, error] of cases) {
      const r = await post(s.url, input);
      const json = await body(r);
      expect([r.status, json.error], JSON.stringify(input)).toEqual([status, error]);
      expect(json.message.length).toBeGreaterThan(10);
    }
    expect((await post(s.url, { windowId: ids[0], questionId: Q0, label: 'no', support: null, labeler: 'ann' })).status).toBe(200); // the same label again: a duplicate
    expect(await gold(j)).toEqual(kept);
    // Another labeler may disagree: that is recorded (calibrate refuses the pair as conflicting gold).
    expect((await post(s.url, { windowId: ids[0], questionId: Q0, label: 'yes', support: null, labeler: 'bob' })).status).toBe(201);
    expect(await gold(j)).toHaveLength(2);
  });

  it('takes a correction of a mis-keyed label as a new line that supersedes it, the first kept in the file; the window then shows the correction', async () => {
    const { j, s, ids } = await setup();
    const first = await body(post(s.url, { windowId: ids[0], questionId: Q0, label: 'no', support: null, labeler: 'ann' }));
    const conflict = await body(post(s.url, { windowId: ids[0], questionId: Q0, label: 'yes', support: 'e2', labeler: 'ann' }));
    expect(conflict.message).toContain('"correction": true');
    const r = await post(s.url, { windowId: ids[0], questionId: Q0, label: 'yes', support: 'e2', labeler: 'ann', correction: true });
    expect(r.status).toBe(201);
    const corrected = await r.json();
    expect(corrected).toMatchObject({
      result: 'corrected',
      row: { label: 'yes', support: 'e2', supersedes: first.row.labeledAt },
      judge: { option: expect.any(String) },
    });
    const lines = (await gold(j)).map((l) => JSON.parse(l));
    expect(lines.map((l) => l.label)).toEqual(['no', 'yes']);
    const w = await body(fetch(new URL(`/api/windows/${ids[0]}?labeler=ann`, s.url)));
    expect(w.questions[0].label).toMatchObject({ label: 'yes', support: 'e2', corrected: true });
    // A correction of nothing is a first label.
    expect(await body(post(s.url, { windowId: ids[1], questionId: Q0, label: 'no', support: null, labeler: 'ann', correction: true }))).toMatchObject({
      result: 'recorded',
    });
    // After a restart the store reads the latest line as this labeler's label.
    const reopened = await GoldStore.open(j.gold);
    expect(reopened.labelOf('ann', Q0, ids[0]!)).toMatchObject({ label: 'yes' });
  });

  it('refuses a window edited after it was judged, to show and to label, and keeps the labels already recorded', async () => {
    const { j, s, ids } = await setup();
    expect((await post(s.url, { windowId: ids[1], questionId: Q0, label: 'no', support: null, labeler: 'ann' })).status).toBe(201);
    const kept = await gold(j);
    const path = join(j.windows, `${ids[0]}.json`);
    const w = JSON.parse(await readFile(path, 'utf8'));
    w.events[0].content = w.events[0].content.replace('do the task', 'do another task');
    w.stateDigest = windowStateDigest(w); // even with its own digest made to match, the ledger's does not
    await writeFile(path, JSON.stringify(w));
    const shown = await fetch(new URL(`/api/windows/${ids[0]}?labeler=ann`, s.url));
    expect(shown.status).toBe(409);
    expect((await body(shown)).message).toContain('tampered');
    const r = await post(s.url, { windowId: ids[0], questionId: Q0, label: 'no', support: null, labeler: 'ann' });
    expect(r.status).toBe(409);
    expect(await gold(j)).toEqual(kept);
  });

  it('answers only to its own host names and takes a write only with its own Origin: another Host (DNS rebinding) or a missing or cross-origin Origin is refused, and nothing is written', async () => {
    const { j, s, ids } = await setup();
    const port = new URL(s.url).port;
    const own = `127.0.0.1:${port}`;
    const evil = `evil.example:${port}`;
    const label = JSON.stringify({ windowId: ids[0], questionId: Q0, label: 'yes', support: null, labeler: 'mallory' });
    for (const path of ['/', '/app.js', '/api/config', '/api/windows?labeler=x', `/api/windows/${ids[0]}?labeler=x`, '/api/review']) {
      const r = await rawRequest(s.url, 'GET', path, { host: evil });
      expect([path, r.status, r.json.error]).toEqual([path, 403, 'host-not-allowed']);
      expect(r.json.message).toContain('evil.example');
    }
    const rebound = await rawRequest(s.url, 'POST', '/api/labels', { host: evil, origin: `http://${evil}`, 'content-type': 'application/json' }, label);
    expect([rebound.status, rebound.json.error]).toEqual([403, 'host-not-allowed']);
    expect((await rawRequest(s.url, 'GET', '/api/windows', {})).status).toBe(200); // Node sends its own Host
    for (const origin of [
      undefined,
      '',
      'http://evil.example',
      'null',
      `https://attacker.test:${port}`,
      `http://127.0.0.1:${Number(port) + 1}`,
      `http://${own}/path`,
    ]) {
      const r = await rawRequest(
        s.url,
        'POST',
        '/api/labels',
        { host: own, 'content-type': 'application/json', ...(origin === undefined ? {} : { origin }) },
        label,
      );
      expect([origin, r.status, r.json.error]).toEqual([origin, 403, origin === undefined || origin === '' ? 'origin-required' : 'origin-not-allowed']);
      expect(r.json.message.length).toBeGreaterThan(20);
    }
    expect(await gold(j)).toEqual([]);
    // Its own names still work: reads under each loopback name, a write from its own origin.
    for (const host of [own, `localhost:${port}`, `LOCALHOST:${port}`])
      expect((await rawRequest(s.url, 'GET', '/api/windows?labeler=x', { host })).status).toBe(200);
    const ok = await rawRequest(
      s.url,
      'POST',
      '/api/labels',
      { host: `localhost:${port}`, origin: `http://localhost:${port}`, 'content-type': 'application/json' },
      label,
    );
    expect(ok.status).toBe(201);
    expect(await gold(j)).toHaveLength(1);
  });

  it('asks for the same token as the receivers when one is configured; the page itself holds no data and loads nothing from another host', async () => {
    const { s, ids } = await setup({ auth: { tokenEnv: 'LABEL_TOKEN' }, env: { LABEL_TOKEN: 's3cret-token' } });
    expect((await fetch(new URL('/api/windows', s.url))).status).toBe(401);
    expect((await post(s.url, { windowId: ids[0], questionId: Q0, label: 'no', support: null, labeler: 'ann' })).status).toBe(401);
    expect((await fetch(new URL('/api/windows', s.url), { headers: { authorization: 'Bearer s3cret-token' } })).status).toBe(200);
    expect(
      (await post(s.url, { windowId: ids[0], questionId: Q0, label: 'no', support: null, labeler: 'ann' }, { authorization: 'Bearer s3cret-token' })).status,
    ).toBe(201);
    expect(await body(fetch(new URL('/api/config', s.url)))).toEqual({ authRequired: true, blind: true });
    for (const file of ['/', '/app.js', '/app.css', '/dom.js', '/event-view.js']) {
      const r = await fetch(new URL(file, s.url));
      expect(r.status).toBe(200);
      expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(await r.text()).not.toMatch(/https?:\/\/|\/\/cdn|@import/);
    }
  });
});

describe('the trajectory page on the label server', () => {
  it('serves the page at /trajectories/KEY without a token (it holds no data) and its data only with one; an unknown key is a 404 saying why', async () => {
    const seen: string[] = [];
    const trajectory = async (key: string) => (
      seen.push(key), key === 'run-a' ? { found: true as const, view: { key } } : { found: false as const, why: `no trajectory with key ${key}` }
    );
    const { s } = await setup({ auth: { tokenEnv: 'LABEL_TOKEN' }, env: { LABEL_TOKEN: 't0ken' }, trajectory });
    for (const file of ['/trajectories/run-a', '/trajectory.js']) {
      const r = await fetch(new URL(file, s.url));
      expect(r.status).toBe(200);
      expect(r.headers.get('content-security-policy')).toContain("default-src 'none'");
      expect(await r.text()).not.toMatch(/https?:\/\/|\/\/cdn|@import|run-a/);
    }
    expect((await fetch(new URL('/api/trajectories/run-a', s.url))).status).toBe(401);
    expect(seen).toEqual([]);
    const auth = { authorization: 'Bearer t0ken' };
    expect(await body(fetch(new URL('/api/trajectories/run-a', s.url), { headers: auth }))).toEqual({ key: 'run-a' });
    const missing = await fetch(new URL('/api/trajectories/run%2Fz', s.url), { headers: auth });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'unknown-trajectory', message: 'no trajectory with key run/z' });
  });

  it('has no trajectory page when it is given no trajectories', async () => {
    const { s } = await setup();
    expect((await fetch(new URL('/trajectories/run-a', s.url))).status).toBe(404);
  });
});

describe('reading the ledger of a running serve', () => {
  it("reads again when the ledger's last line is being written, instead of refusing it as corrupt", async () => {
    const { j, s } = await setup();
    const line = JSON.stringify({
      v: 1,
      type: 'deferred',
      runId: 'run-z',
      revision: 1,
      windowKind: 'turn',
      anchor: 't/s',
      windowId: null,
      triggers: ['terminal'],
      reason: 'shutdown',
      detail: 'closed before dispatch',
      recordedAt: new Date().toISOString(),
    });
    await appendFile(j.ledger, line.slice(0, 40));
    const finish = new Promise((r) => setTimeout(r, 80)).then(() => appendFile(j.ledger, line.slice(40) + '\n'));
    const r = await fetch(new URL('/api/windows?labeler=ann', s.url));
    await finish;
    expect(r.status).toBe(200);
    expect(((await body(r)) as { windows: unknown[] }).windows).toHaveLength(2);
  });
});

describe('the gold file', () => {
  it('refuses a malformed row or a torn last line at open, naming the line, and changes nothing', async () => {
    const { j, s, ids } = await setup();
    expect((await post(s.url, { windowId: ids[0], questionId: Q0, label: 'no', support: null, labeler: 'ann' })).status).toBe(201);
    await appendFile(j.gold, '{"questionId":"x","windowId":"w","label":"perhaps","source":"a"}\n');
    const text = await readFile(j.gold, 'utf8');
    await expect(GoldStore.open(j.gold)).rejects.toThrow(/malformed at line 2: label/);
    await writeFile(j.gold, text.split('\n')[0] + '\n{"questionId":');
    await expect(GoldStore.open(j.gold)).rejects.toThrow(/malformed at line 2: the last line has no newline/);
    expect((await readFile(j.gold, 'utf8')).split('\n')[0]).toBe(text.split('\n')[0]);
  });
});
