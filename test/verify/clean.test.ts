/**
 * `trajwatch verify` on healthy directories exits 0: one written by `replay` of the in-repo
 * TRAIL traces and framework captures, and one written by a real `serve` (write-ahead log on)
 * stopped by SIGTERM with a trajectory still open.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sendFlaggedAgentRuns } from '../helpers/agent-trace.ts';
import { runCli } from '../helpers/cli.ts';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { cleanReplayDir, verifyJson } from './helpers.ts';

const checked = (out: Awaited<ReturnType<typeof verifyJson>>['out'], id: string) => out.summary.invariants.find((i) => i.id === id)!.checked;

describe('trajwatch verify on healthy directories', () => {
  it('a replay of the TRAIL traces and the framework captures: every invariant holds', async () => {
    const dir = await cleanReplayDir();
    const { code, out } = await verifyJson(dir);
    expect(out.violations).toEqual([]);
    expect(code).toBe(0);
    expect(out.summary.ok).toBe(true);
    for (const id of ['record-schema', 'manifest-vs-capture', 'audience-strip', 'revision-unique', 'finding-id-stable', 'manifest-findings']) {
      expect(checked(out, id), id).toBeGreaterThan(0);
    }
    // The text form: one line per invariant, 0 violations each, and the verdict.
    const text = await runCli(['verify', '--data-dir', dir]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^manifest-vs-capture +\d+ checked, 0 violations/m);
    expect(text.stdout).toMatch(/every invariant holds/);
  });

  it('a real serve stopped by SIGTERM, one trajectory still open in the write-ahead log: every invariant holds', async () => {
    // Quiet for 2 s before a trajectory closes: the last run is still open when SIGTERM comes.
    const serve = await startServe({ assembler: { quietPeriodMs: 2_000 } });
    try {
      await sendFlaggedAgentRuns(serve.url, ['conv-verify-a', 'conv-verify-b']);
      await waitForLines(join(serve.dataDir, 'findings.jsonl'), (r) => r.filter((x) => 'record_kind' in x).length >= 2);
      // Let the log release them (its timer), then one more run that SIGTERM leaves open.
      await waitForRelease(serve.dataDir);
      await sendFlaggedAgentRuns(serve.url, ['conv-verify-open']);
    } finally {
      expect(await serve.stop()).toBe(0);
    }
    const { code, out } = await verifyJson(serve.dataDir);
    expect(out.violations).toEqual([]);
    expect(code).toBe(0);
    expect(checked(out, 'spans-accounted')).toBeGreaterThan(0);
    expect(checked(out, 'revision-unique')).toBeGreaterThan(0);
    // The open run's spans wait in the log for the next start: counted, not a violation.
    expect(out.summary.invariants.find((i) => i.id === 'spans-accounted')!.note).toMatch(/^\d+ span\(s\) in unreleased requests/);
  });
});

/** Until verify sees released spans (the log releases finished requests on a 500 ms timer); bounded. */
async function waitForRelease(dataDir: string): Promise<void> {
  for (let i = 0; i < 60; i++) {
    const { out } = await verifyJson(dataDir);
    if (checked(out, 'spans-accounted') > 0) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the write-ahead log released nothing');
}
