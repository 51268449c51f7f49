import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServe, type ServeProcess, waitForLines } from '../helpers/serve.ts';
import { agentRunRequest, metricValue, postJson } from './agent-run.ts';

/**
 * A Collector or SDK queue re-sends after an outage: the root span of a trace whose trajectory
 * already closed arrives alone at a `serve` that restarted (SIGTERM, or kill -9) in between.
 * It must never come back as a second revision 1 whose manifest claims absences: the
 * closed-revision memory survives the restart (`<dataDir>/revisions`), so an exact re-send is
 * a duplicate and a changed one is revision 2; with the memory lost, the revision says
 * `previous-revision-unknown` and claims nothing.
 */

const TRACE = '7a1f0c9e2b3d4c5e8f90a1b2c3d4e5f6';

interface TrajectoryRow {
  key: string;
  revision: number;
  complete: boolean;
  incompleteReasons: string[];
  steps: unknown[];
}

interface Record_ {
  record_kind?: string;
  subject: { trajectory_key: string; revision: number };
  checks?: { check: string; status: string }[];
}

const full = agentRunRequest({ traceId: TRACE });
const spans = (full.resourceSpans[0] as { scopeSpans: [{ spans: { parentSpanId?: string; attributes: unknown[] }[] }] }).scopeSpans[0].spans;
const rootOnly = {
  resourceSpans: [
    { ...(full.resourceSpans[0] as object), scopeSpans: [{ scope: { name: 'agent' }, spans: spans.filter((s) => s.parentSpanId === undefined) }] },
  ],
};
/** The root re-exported with one more attribute: another payload under a known span id. */
const changedRoot = {
  resourceSpans: [
    {
      ...(full.resourceSpans[0] as object),
      scopeSpans: [
        {
          scope: { name: 'agent' },
          spans: spans
            .filter((s) => s.parentSpanId === undefined)
            .map((s) => ({ ...s, attributes: [...s.attributes, { key: 'retry.attempt', value: { stringValue: '2' } }] })),
        },
      ],
    },
  ],
};

const CONFIG = { assembler: { quietPeriodMs: 150, idleTimeoutMs: 1_000 } };

async function trajectories(dataDir: string, until: (rows: TrajectoryRow[]) => boolean): Promise<TrajectoryRow[]> {
  return (await waitForLines<TrajectoryRow>(join(dataDir, 'trajectories.jsonl'), until)).filter((r) => r.key === TRACE);
}

async function manifests(dataDir: string, until: (rows: Record_[]) => boolean = () => true): Promise<Record_[]> {
  const rows = await waitForLines<Record_>(join(dataDir, 'findings.jsonl'), until);
  return rows.filter((r) => r.record_kind === 'analysis-manifest' && r.subject.trajectory_key === TRACE);
}

const manifestCount = (n: number) => (rows: Record_[]) => rows.filter((r) => r.record_kind === 'analysis-manifest').length >= n;

async function metric(serve: ServeProcess, name: string): Promise<number> {
  return metricValue(await (await fetch(`${serve.url}/metrics`)).text(), name);
}

/** Sends the whole run, waits for revision 1 (complete) and its manifest. */
async function firstRevision(serve: ServeProcess): Promise<void> {
  expect((await postJson(serve.url, full)).status).toBe(200);
  const [first] = await trajectories(serve.dataDir, (r) => r.length >= 1);
  expect([first!.revision, first!.complete, first!.steps.length]).toEqual([1, true, 4]);
  const [m] = await manifests(serve.dataDir, manifestCount(1));
  expect(m!.checks!.some((c) => c.status === 'none-observed')).toBe(true);
}

async function restart(before: ServeProcess, how: 'SIGTERM' | 'SIGKILL'): Promise<ServeProcess> {
  const exited = new Promise((resolve) => before.child.once('exit', (code, signal) => resolve(signal ?? code)));
  before.child.kill(how);
  expect(await exited).toBe(how === 'SIGTERM' ? 0 : 'SIGKILL');
  // `--data-dir` wins over the fresh directory startServe makes: say which one is in use.
  return { ...(await startServe(CONFIG, ['--data-dir', before.dataDir])), dataDir: before.dataDir };
}

/** Every revision after the first is incomplete and its manifest claims no absence. */
async function expectNoSecondRevisionOne(dataDir: string, revisions: number): Promise<TrajectoryRow[]> {
  const rows = await trajectories(dataDir, (r) => r.filter((t) => t.key === TRACE).length >= revisions);
  const ms = await manifests(dataDir, (r) => r.filter((m) => m.record_kind === 'analysis-manifest' && m.subject.trajectory_key === TRACE).length >= revisions);
  expect(rows.filter((r) => r.revision === 1 && !r.incompleteReasons.includes('previous-revision-unknown'))).toHaveLength(1);
  for (const later of rows.slice(1)) expect(later.complete).toBe(false);
  for (const m of ms.slice(1)) expect(m.checks!.filter((c) => c.status === 'none-observed')).toEqual([]);
  return rows;
}

describe('serve restarted between a trace and its re-sent root', () => {
  for (const how of ['SIGTERM', 'SIGKILL'] as const) {
    it(`${how}: the exact root re-sent alone is a duplicate; a changed root is revision 2, incomplete, claiming no absence`, async () => {
      let serve = await startServe(CONFIG);
      try {
        await firstRevision(serve);
        // The memory is written once the revision's output is durable (and the WAL released after it).
        await new Promise((r) => setTimeout(r, 1_200));
        serve = await restart(serve, how);
        expect((await postJson(serve.url, rootOnly)).status).toBe(200);
        const deadline = Date.now() + 5_000;
        const secondRow = async () => (await trajectories(serve.dataDir, () => true)).length > 1;
        while (Date.now() < deadline && (await metric(serve, 'trajwatch_spans_deduplicated')) < 1 && !(await secondRow())) {
          await new Promise((r) => setTimeout(r, 100));
        }
        // Nothing new: not a second revision 1 (checked first, so a failure shows it), but a duplicate.
        expect((await trajectories(serve.dataDir, () => true)).map((r) => [r.revision, r.complete])).toEqual([[1, true]]);
        expect(await metric(serve, 'trajwatch_spans_deduplicated')).toBe(1);
        expect((await postJson(serve.url, changedRoot)).status).toBe(200);
        const rows = await expectNoSecondRevisionOne(serve.dataDir, 2);
        expect(rows.map((r) => [r.revision, r.complete, r.incompleteReasons])).toEqual([
          [1, true, []],
          // The changed root is a capture conflict, not a step: the revision has none of its own.
          [2, false, ['idle-timeout', 'previous-revision-not-retained', 'root-not-seen']],
        ]);
      } finally {
        await serve.stop();
      }
    }, 60_000);
  }

  it('memory lost (its directory deleted): the re-sent root opens a revision marked previous-revision-unknown', async () => {
    let serve = await startServe(CONFIG);
    try {
      await firstRevision(serve);
      await new Promise((r) => setTimeout(r, 1_200));
      const exited = new Promise((resolve) => serve.child.once('exit', resolve));
      serve.child.kill('SIGTERM');
      await exited;
      await rm(join(serve.dataDir, 'revisions'), { recursive: true, force: true });
      serve = { ...(await startServe(CONFIG, ['--data-dir', serve.dataDir])), dataDir: serve.dataDir };
      expect((await postJson(serve.url, rootOnly)).status).toBe(200);
      const rows = await expectNoSecondRevisionOne(serve.dataDir, 2);
      expect(rows[1]!.incompleteReasons).toContain('previous-revision-unknown');
      expect(rows[1]!.steps).toHaveLength(1);
      // The whole run again: its root is now a duplicate, the rest a later revision that stays
      // unknown; the failing tool's finding is the same identity as the first time.
      expect((await postJson(serve.url, full)).status).toBe(200);
      const again = await expectNoSecondRevisionOne(serve.dataDir, 3);
      expect(again.map((r) => [r.revision, r.complete, r.incompleteReasons.includes('previous-revision-unknown')])).toEqual([
        [1, true, false],
        [1, false, true],
        [2, false, true],
      ]);
      const findings = (await waitForLines<Record_ & { area?: string; finding_id?: string }>(join(serve.dataDir, 'findings.jsonl'), () => true)).filter(
        (r) => r.record_kind === undefined && r.area === 'error-output',
      );
      expect(findings).toHaveLength(2);
      expect(new Set(findings.map((f) => f.finding_id)).size).toBe(1);
    } finally {
      await serve.stop();
    }
  }, 60_000);
});
