import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SpanWal } from '../../src/ingest/wal/span-wal.ts';
import { sendFlaggedAgentRuns } from '../helpers/agent-trace.ts';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { collect } from '../helpers/collect.ts';

interface FindingRow {
  subject: { trajectory_key: string };
  method: { name: string };
  record_kind?: string;
}

/** Findings only: the log also holds each trajectory's analysis manifest (it has a record_kind). */
const findingsOnly = (rows: FindingRow[]) => rows.filter((r) => r.record_kind === undefined);

const RUNS = 40;

async function rowsOf(path: string): Promise<FindingRow[]> {
  try {
    return (await readFile(path, 'utf8'))
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as FindingRow);
  } catch {
    return [];
  }
}

describe('SIGKILL with open trajectories (write-ahead log)', () => {
  it('finds every acknowledged agent run after a restart on the same data directory', async () => {
    // A long quiet period: every trajectory is still open when the process is killed.
    const first = await startServe({ assembler: { quietPeriodMs: 600_000, idleTimeoutMs: 600_000 } });
    const dataDir = first.dataDir;
    const findingsPath = join(dataDir, 'findings.jsonl');
    const ids = Array.from({ length: RUNS }, (_, i) => `wal-conv-${i}`);
    // Two exports, so the log holds more than one request; each resolves once acknowledged.
    await sendFlaggedAgentRuns(first.url, ids.slice(0, RUNS / 2));
    await sendFlaggedAgentRuns(first.url, ids.slice(RUNS / 2));
    expect(await rowsOf(findingsPath)).toEqual([]);

    const killed = new Promise((resolve) => first.child.once('exit', (_code, signal) => resolve(signal)));
    first.child.kill('SIGKILL');
    expect(await killed).toBe('SIGKILL');

    const second = await startServe({ assembler: { quietPeriodMs: 200 } }, ['--data-dir', dataDir]);
    try {
      expect(second.output()).toMatch(/replayed [1-9]\d* request\(s\) from the write-ahead log/);
      // Per conversation: error-output on the failing tool and one repetition group.
      const rows = findingsOnly(
        await waitForLines<FindingRow>(findingsPath, (r) => new Set(findingsOnly(r).map((f) => f.subject.trajectory_key)).size >= RUNS, 30_000),
      );
      const byKey = new Map<string, number>();
      const seen = new Map<string, number>();
      for (const f of rows) {
        byKey.set(f.subject.trajectory_key, (byKey.get(f.subject.trajectory_key) ?? 0) + 1);
        const id = `${f.subject.trajectory_key} ${f.method.name}`;
        seen.set(id, (seen.get(id) ?? 0) + 1);
      }
      const duplicates = [...seen].filter(([, n]) => n > 1);
      console.log(
        `wal-sigkill: ${RUNS} runs acknowledged before SIGKILL; ${rows.length} findings after restart; ${seen.size} distinct; duplicates: ${duplicates.length === 0 ? 'none' : JSON.stringify(duplicates)}`,
      );
      expect([...byKey.keys()].sort()).toEqual([...ids].sort());
      for (const id of ids) expect(byKey.get(id), id).toBe(2);
      expect(duplicates).toEqual([]);
    } finally {
      expect(await second.stop()).toBe(0);
    }
    // A clean stop releases everything it finished: nothing is left to replay.
    const { wal, records } = await SpanWal.open(join(dataDir, 'wal'), { maxBytes: 1 << 30, segmentBytes: 1 << 24 });
    await wal.close();
    expect(await collect(records)).toEqual([]);
  }, 90_000);
});
