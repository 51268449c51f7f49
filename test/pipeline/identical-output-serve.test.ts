/**
 * The same output through `serve` as through the in-process replay: the TRAIL traces, every
 * framework capture and the first 600 generated trajectories sent over OTLP/HTTP protobuf to a real
 * `trajwatch serve` with the span WAL on, and the findings, manifests and trajectory lines it
 * writes for each source compared with the in-process replay's (identical-output.ts). That is
 * the path where WAL-backed text is held after issue 30. Twice: `live`, one serve closing the
 * trajectories as the requests come; `restarted`, a serve that closes nothing takes them, is
 * killed (SIGKILL), and a second one on its data directory replays them from the WAL.
 *
 * Identical modulo what the clock decides, and only that:
 * - serve closes by the wall clock (`arrival`): a trajectory replay closes with `end-of-input`
 *   (the last one of a source: nothing comes after it in event time) closes here by its quiet
 *   period, so `closedBy` of trajectory lines and `capture.closed_by` of manifests are compared
 *   with `end-of-input` read as `quiet-after-root`, and the `manifest_id` of such a manifest
 *   (a digest over it, close cause included) is not compared;
 * - the order of lines across trajectories follows close order, so each stream is compared
 *   sorted; within a line nothing is ignored.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trailCorpus } from '../helpers/trail-corpus.ts';
import { type ServeProcess, startServe } from '../helpers/serve.ts';
import { captureSources, generatedSource, type ReplayResult, replaySource, type Source, trailSource } from './identical-output.ts';

const CLOSE_TIMEOUT_MS = 30_000;
/**
 * The first 600 of the generated trajectories (the same bytes as in the golden's 3,000): about
 * 660 long values, 22 with invalid UTF-8, 13 MB of protobuf; the file runs in under 90 s on loaded cores.
 */
const SERVED_GENERATED_COUNT = 600;

interface Compared {
  source: Source;
  inProcess: ReplayResult['text'];
  served: ReplayResult['text'];
}

const serves: ServeProcess[] = [];
/** Per way through serve: closed as the requests came (`live`), or replayed from the WAL after a SIGKILL (`restarted`). */
const compared: Record<'live' | 'restarted', Compared[]> = { live: [], restarted: [] };
const allCompared = (): [string, Compared][] => Object.entries(compared).flatMap(([mode, cs]) => cs.map((c): [string, Compared] => [mode, c]));

async function lines(path: string): Promise<string[]> {
  try {
    const text = await readFile(path, 'utf8');
    return text.split('\n').filter((l) => l !== '');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

const isManifest = (line: string): boolean => (JSON.parse(line) as { record_kind?: unknown }).record_kind !== undefined;

async function send(url: string, source: Source): Promise<void> {
  for (const { signal, body } of source.bodies) {
    const response = await fetch(`${url}/v1/${signal}`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
    if (response.status !== 200) throw new Error(`${source.name}: ${signal} answered ${response.status}: ${await response.text()}`);
  }
}

/** Waits until serve wrote `expected` manifests and trajectory lines; returns its streams. */
async function awaitOutput(dataDir: string, expected: { manifests: number; trajectories: number }): Promise<ReplayResult['text']> {
  const deadline = Date.now() + CLOSE_TIMEOUT_MS;
  for (;;) {
    const findingsLog = await lines(join(dataDir, 'findings.jsonl'));
    const trajectories = await lines(join(dataDir, 'trajectories.jsonl'));
    const manifests = findingsLog.filter(isManifest);
    if (manifests.length >= expected.manifests && trajectories.length >= expected.trajectories) {
      return { findings: findingsLog.filter((l) => !isManifest(l)), manifests, trajectories };
    }
    if (Date.now() > deadline)
      throw new Error(`serve wrote ${manifests.length}/${expected.manifests} manifests, ${trajectories.length}/${expected.trajectories} trajectories`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Trajectory key and revision of a trajectory line or a manifest. */
function revisionOf(line: string): string {
  const value = JSON.parse(line) as { key?: string; revision?: number; subject?: { trajectory_key: string; revision: number } };
  return value.subject === undefined ? `${value.key} ${value.revision}` : `${value.subject.trajectory_key} ${value.subject.revision}`;
}

/** The revisions the replay closed at its end of input. */
function endedRevisions(manifests: readonly string[]): Set<string> {
  const ended = (line: string) => (JSON.parse(line) as { capture: { closed_by: string } }).capture.closed_by === 'end-of-input';
  return new Set(manifests.filter(ended).map(revisionOf));
}

/**
 * A trajectory line or manifest of a revision the replay closed at its end of input, with its
 * close cause read as the quiet period's and, for a manifest, without its `manifest_id` (a
 * digest over the manifest, close cause included); any other line as it is.
 */
function clockFree(line: string, ended: ReadonlySet<string>): string {
  if (!ended.has(revisionOf(line))) return line;
  const value = JSON.parse(line) as { closedBy?: string; manifest_id?: string; capture?: { closed_by?: string } };
  if (value.closedBy !== undefined) value.closedBy = 'quiet-after-root';
  if (value.capture !== undefined) {
    value.capture.closed_by = 'quiet-after-root';
    delete value.manifest_id;
  }
  return JSON.stringify(value);
}

/** The trajectory key of a trajectory line, a finding or a manifest. */
function keyOf(line: string): string {
  const value = JSON.parse(line) as { key?: string; subject?: { trajectory_key: string } };
  return value.subject?.trajectory_key ?? value.key!;
}

/**
 * Sources in groups whose trajectory keys are distinct (the framework matrix and the captures
 * reuse session ids such as `matrix-langgraph-session`): one serve per group, since a key seen
 * again in one process opens a new revision, where each in-process replay starts afresh.
 */
function disjointGroups(results: { source: Source; inProcess: ReplayResult['text'] }[]) {
  const groups: { keys: Set<string>; members: typeof results }[] = [];
  for (const r of results) {
    const keys = r.inProcess.trajectories.map(keyOf);
    let group = groups.find((g) => keys.every((k) => !g.keys.has(k)));
    if (group === undefined) groups.push((group = { keys: new Set(), members: [] }));
    for (const k of keys) group.keys.add(k);
    group.members.push(r);
  }
  return groups.map((g) => g.members);
}

beforeAll(async () => {
  const sources = [...(trailCorpus().kind === 'in-repo' ? [trailSource()] : []), ...(await captureSources()), generatedSource(SERVED_GENERATED_COUNT)];
  const results = [];
  for (const source of sources) results.push({ source, inProcess: (await replaySource(source)).text });
  const groups = disjointGroups(results);
  console.log(`identical-output-serve: ${groups.length} serve processes: ${groups.map((g) => g.map((r) => r.source.name).join(', ')).join(' | ')}`);
  for (const group of groups) {
    compared.live.push(...(await serveGroup(group, 'live')));
    compared.restarted.push(...(await serveGroup(group, 'restarted')));
  }
}, 300_000);

/** Close at once (the short idle timeout: TRAIL holds a trace without its root, which closes by it in the replay too). */
const CLOSING = { assembler: { quietPeriodMs: 2_000, idleTimeoutMs: 4_000 }, receiver: { wal: { enabled: true } } };
/** Close nothing while the requests come in. */
const HOLDING = { assembler: { quietPeriodMs: 600_000, idleTimeoutMs: 600_000 }, receiver: { wal: { enabled: true } } };

/**
 * Serves one group, each source's requests back to back, and returns each source's lines (by
 * trajectory key). `live`: one serve closes them as they come. `restarted`: a serve that closes
 * nothing takes them and is killed (SIGKILL), and a second one on the same data directory
 * replays them from the span WAL and closes them.
 */
async function serveGroup(group: readonly { source: Source; inProcess: ReplayResult['text'] }[], mode: 'live' | 'restarted'): Promise<Compared[]> {
  const first = await startServe(mode === 'live' ? CLOSING : HOLDING);
  serves.push(first);
  for (const { source } of group) await send(first.url, source);
  let serve = first;
  if (mode === 'restarted') {
    const killed = new Promise((resolve) => first.child.once('exit', (_code, signal) => resolve(signal)));
    first.child.kill('SIGKILL');
    expect(await killed).toBe('SIGKILL');
    serve = await startServe(CLOSING, ['--data-dir', first.dataDir]);
    serves.push(serve);
    expect(serve.output()).toMatch(/replayed [1-9]\d* request\(s\) from the write-ahead log/);
  }
  const sum = (count: (r: (typeof group)[number]) => number) => group.reduce((n, r) => n + count(r), 0);
  const served = await awaitOutput(first.dataDir, {
    manifests: sum((r) => r.inProcess.manifests.length),
    trajectories: sum((r) => r.inProcess.trajectories.length),
  });
  await serve.stop();
  // What a stopping serve says only when its HTTP receiver has the WAL on.
  expect(serve.output()).toContain('open trajectories stay in the write-ahead log');
  // Nothing served belongs to no source of the group.
  expect(served.trajectories.length).toBe(sum((r) => r.inProcess.trajectories.length));
  expect(served.findings.length).toBe(sum((r) => r.inProcess.findings.length));
  return group.map(({ source, inProcess }) => {
    const keys = new Set(inProcess.trajectories.map(keyOf));
    const mine = (stream: readonly string[]) => stream.filter((l) => keys.has(keyOf(l)));
    return { source, inProcess, served: { findings: mine(served.findings), manifests: mine(served.manifests), trajectories: mine(served.trajectories) } };
  });
}

afterAll(async () => {
  for (const serve of serves) await serve.stop();
});

/**
 * Where two line sets (compared sorted) part: how many lines each has that the other lacks and
 * the first of each, cut short; undefined when they are the same. Lines run to 64 KiB and more,
 * so a whole-array diff would bury the answer.
 */
function setDifference(served: readonly string[], replayed: readonly string[]): string | undefined {
  const a = [...served].sort();
  const b = [...replayed].sort();
  if (a.length === b.length && a.every((l, i) => l === b[i])) return undefined;
  const inB = new Set(b);
  const inA = new Set(a);
  const onlyServed = a.filter((l) => !inB.has(l));
  const onlyReplayed = b.filter((l) => !inA.has(l));
  const cut = (l: string | undefined) => (l === undefined ? '-' : l.length > 600 ? `${l.slice(0, 600)}…` : l);
  return `${a.length} lines served, ${b.length} replayed; ${onlyServed.length} only served, first: ${cut(onlyServed[0])}\n${onlyReplayed.length} only replayed, first: ${cut(onlyReplayed[0])}`;
}

describe('serve with the span WAL writes what the in-process replay writes', () => {
  it('the same findings, source by source', () => {
    const problems = allCompared().map(([mode, c]) => [`${mode} ${c.source.name}`, setDifference(c.served.findings, c.inProcess.findings)]);
    expect(
      problems
        .filter(([, d]) => d !== undefined)
        .map(([name, d]) => `${name}: ${d}`)
        .join('\n'),
    ).toBe('');
  });

  it('the same manifests and trajectory lines, modulo the close cause end-of-input', () => {
    const problems: string[] = [];
    for (const [mode, c] of allCompared()) {
      const ended = endedRevisions(c.inProcess.manifests);
      const same = (lines: readonly string[]) => lines.map((l) => clockFree(l, ended));
      const manifests = setDifference(same(c.served.manifests), same(c.inProcess.manifests));
      const trajectories = setDifference(same(c.served.trajectories), same(c.inProcess.trajectories));
      if (manifests !== undefined) problems.push(`${mode} ${c.source.name} manifests: ${manifests}`);
      if (trajectories !== undefined) problems.push(`${mode} ${c.source.name} trajectories: ${trajectories}`);
    }
    expect(problems.join('\n')).toBe('');
  });

  it('the WAL was on, and every source produced output', () => {
    expect(compared.live.length).toBeGreaterThan(20);
    expect(compared.restarted.length).toBe(compared.live.length);
    for (const [mode, c] of allCompared()) expect(c.served.trajectories.length, `${mode} ${c.source.name}`).toBeGreaterThan(0);
  });
});
