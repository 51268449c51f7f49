import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runChecks } from '../../src/checks/run-checks.ts';
import type { JudgeConfig } from '../../src/judge/config.ts';
import { JudgeConfigSchema } from '../../src/judge/config.ts';
import { DecisionPoints } from '../../src/judge/decision-points.ts';
import type { JudgeFault } from '../../src/judge/fault.ts';
import { LEDGER_FILE } from '../../src/judge/ledger/ledger.ts';
import { CHECKS, deployRun, harness, judgeAll, type Harness } from './judge-harness.ts';
import { answers, completion } from './scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint, which cannot run here.

const hs: Harness[] = [];
afterEach(async () => {
  await Promise.all(hs.splice(0).map((h) => h.server.close()));
});

async function setup(over: Record<string, unknown> = {}): Promise<Harness> {
  const h = await harness(() => ({ body: completion(answers({ 0: { letter: 'A', support: 'e1', p: 0.97 } }), { model: 'judge-model-2025-01' }) }), {}, over);
  hs.push(h);
  return h;
}

const withLedger = (cfg: JudgeConfig, ledger: Record<string, number>): JudgeConfig => JudgeConfigSchema.parse({ ...cfg, ledger });
const runs = (n: number, prefix = 'run') => Array.from({ length: n }, (_, i) => deployRun(`${prefix}-${i}`));
/** Findings as a replay emits them: the same ids and content whichever ledger file they came from. */
const comparable = (fs: { finding_id: string }[]) =>
  JSON.stringify(fs.map((f) => ({ ...f, replay: { ...(f as { replay?: object }).replay, original_recorded_at: 'T' } })));

describe('judge ledger bounded, replay exact', () => {
  it('replays after compaction exactly as from the uncompacted ledger: the same findings, zero new calls', async () => {
    // Two calls per minute: most windows are deferred, each leaving an audit line to compact away.
    const h = await setup({ budget: { callsPerMinute: 2 } });
    const first = await judgeAll(h.dataDir, h.cfg, runs(12));
    expect(first.dp.stats().deferred['calls-per-minute']).toBeGreaterThan(20);
    const paid = first.dp.stats().calls;
    const control = `${h.dataDir}-control`;
    await cp(h.dataDir, control, { recursive: true });

    // A token budget of 1 defers every window not already answered (the budget is no part of identity), so nothing new is paid.
    const replayOnly = JudgeConfigSchema.parse({ ...h.cfg, budget: { tokensPerDay: 1 } });
    const compacted = await judgeAll(h.dataDir, withLedger(replayOnly, { compactAtBytes: 4096, maxBytes: 1 << 20 }), runs(12));
    const uncompacted = await judgeAll(control, replayOnly, runs(12));
    expect(compacted.dp.stats().ledger.compactions).toBeGreaterThan(0);
    expect(uncompacted.dp.stats().ledger.compactions).toBe(0);
    for (const r of [compacted, uncompacted]) expect(r.dp.stats()).toMatchObject({ calls: 0, attempts: 0, replays: paid });
    expect(comparable(compacted.findings)).toBe(comparable(uncompacted.findings));
    expect(compacted.findings.length).toBe(paid * 9);
    const types = (await readFile(join(h.dataDir, 'judge', LEDGER_FILE), 'utf8'))
      .trimEnd()
      .split('\n')
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types.filter((t) => t === 'intent').length).toBe(paid);
    expect(types.filter((t) => t === 'result').length).toBe(paid);
  });

  it('defers new calls as ledger-full once what replay needs fills maxBytes, counted and named in the fates, and keeps replaying the rest', async () => {
    const h = await setup({ budget: { callsPerMinute: 1000, maxQueuedWindows: 1000 }, ledger: { compactAtBytes: 65536, maxBytes: 65536 } });
    // One trajectory at a time, so what fills the ledger is the answers kept for replay, not calls waiting together.
    const filling = await DecisionPoints.open(h.dataDir, h.cfg, { checks: CHECKS, onFindings: () => undefined });
    for (const t of runs(8)) await filling.consider(t, runChecks(t, CHECKS), []);
    await filling.close();
    const stats = filling.stats();
    expect(stats.deferred['ledger-full']).toBeGreaterThan(0);
    expect(stats.calls).toBeGreaterThan(0);
    expect(stats.ledger.bytes).toBeLessThanOrEqual(65536);

    // The fates say so: the same reason and a detail naming the bound.
    const dp = await DecisionPoints.open(h.dataDir, h.cfg, { checks: CHECKS, onFindings: () => undefined });
    const fresh = deployRun('fresh');
    const part = await dp.consider(fresh, runChecks(fresh, CHECKS), []);
    await dp.close();
    const asked = part.windows.filter((w) => w.fate !== 'not-sampled');
    expect(asked.length).toBeGreaterThan(0);
    for (const w of asked)
      expect(w).toMatchObject({ fate: 'deferred', reason: 'ledger-full', detail: expect.stringMatching(/bytes needed for replay, maxBytes 65536/) });
    expect(dp.stats().calls).toBe(0);

    // Nothing needed for replay was deleted: every paid window replays.
    const again = await judgeAll(h.dataDir, h.cfg, runs(8));
    expect(again.dp.stats()).toMatchObject({ calls: 0, replays: stats.calls });
  });

  it('tells onFault of a fault as a structured event and counts it; without a listener nothing is written to stderr', async () => {
    const h = await setup();
    const faults: JudgeFault[] = [];
    const write = process.stderr.write;
    let written = '';
    process.stderr.write = ((s: string) => ((written += s), true)) as typeof process.stderr.write;
    try {
      for (const onFault of [undefined, (f: JudgeFault) => faults.push(f)]) {
        const dp = await DecisionPoints.open(h.dataDir, h.cfg, {
          checks: CHECKS,
          onFindings: () => {
            throw new Error('sink refused');
          },
          ...(onFault === undefined ? {} : { onFault }),
        });
        const t = deployRun(onFault === undefined ? 'quiet' : 'told');
        await dp.consider(t, runChecks(t, CHECKS), []);
        await dp.close();
        expect(dp.stats().faults?.emit).toBeGreaterThan(0);
      }
    } finally {
      process.stderr.write = write;
    }
    expect(written).toBe('');
    expect(faults[0]).toMatchObject({ event: 'judge-fault', part: 'emit', first: true, message: 'sink refused' });
    expect(faults.slice(1).every((f) => !f.first)).toBe(true);
  });
});
