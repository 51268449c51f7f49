import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { trajectoryPages } from '../../src/cli/label.ts';
import { lookUpTrajectory } from '../../src/cli/trajectory-log.ts';

const T1 = 'a'.repeat(32);
const T2 = 'b'.repeat(32);
const row = (revision: number) => ({
  key: 'session-42',
  traceIds: [T1, T2],
  revision,
  complete: true,
  incompleteReasons: [],
  steps: [{ id: '01', traceId: T1, kind: 'tool', toolName: 'ls', startTime: '1000000', endTime: '3000000' }],
});

it('finds the trajectory a trace id belongs to for the trajectory page (a Grafana exemplar knows the trace, not the session), and show keeps to keys', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-lookup-'));
  await writeFile(join(dir, 'trajectories.jsonl'), `${JSON.stringify(row(1))}\n${JSON.stringify(row(2))}\n`);
  await writeFile(
    join(dir, 'findings.jsonl'),
    `${JSON.stringify({ record_kind: 'analysis-manifest', subject: { trajectory_key: 'session-42', revision: 2 }, judge: 'disabled', checks: [] })}\n`,
  );
  const byTrace = await lookUpTrajectory(dir, T2, { byTraceId: true });
  expect(byTrace).toMatchObject({ kind: 'found', trajectory: { key: 'session-42', revision: 2 }, manifest: { judge: 'disabled' } });
  expect(await lookUpTrajectory(dir, T2)).toMatchObject({ kind: 'no-match' });
  const page = await trajectoryPages(dir)(T1);
  expect(page).toMatchObject({
    found: true,
    view: { key: 'session-42', revision: 2, steps: [{ id: '01', offsetMs: 0, durationMs: 2, depth: 0 }], manifest: { judge: 'disabled' } },
  });
  expect(await trajectoryPages(join(dir, 'none'))('x')).toEqual({
    found: false,
    why: `no trajectory log at ${join(dir, 'none', 'trajectories.jsonl')}: serve (or replay --trajectories) writes it`,
  });
});
