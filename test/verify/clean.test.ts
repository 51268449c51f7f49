/**
 * `trajwatch verify` on healthy directories exits 0: one written by `replay` of the in-repo
 * TRAIL traces and framework captures, one written by a real `serve` (write-ahead log on)
 * stopped by SIGTERM with a trajectory still open, and one by a `serve` with the judge on. The
 * judge's LLM endpoint cannot run here: a stand-in HTTP server speaking Chat Completions
 * answers it (`test/helpers/model-stand-in.ts`); everything else is the real service.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sendFlaggedAgentRuns } from '../helpers/agent-trace.ts';
import { runCli } from '../helpers/cli.ts';
import { startModelStandIn } from '../helpers/model-stand-in.ts';
import { startServe, waitForLines } from '../helpers/serve.ts';
import { cleanReplayDir, jsonLines, verifyJson } from './helpers.ts';

const checked = (out: Awaited<ReturnType<typeof verifyJson>>['out'], id: string) => out.summary.invariants.find((i) => i.id === id)!.checked;

// Each case starts real processes (replay, serve, verify): bounded generously for loaded shared cores.
describe('trajwatch verify on healthy directories', { timeout: 300_000 }, () => {
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

  it('a real serve with the judge on (a stand-in model endpoint): every window has its fate, every invariant holds', async () => {
    const model = await startModelStandIn();
    try {
      const serve = await startServe({ judge: { enabled: true, client: { baseUrl: model.baseUrl, model: 'judge', apiKeyEnv: null, retries: 0 } } });
      try {
        await sendFlaggedAgentRuns(serve.url, ['conv-verify-judged-a', 'conv-verify-judged-b']);
        // A manifest is written once its revision's judged windows are settled.
        await waitForLines(join(serve.dataDir, 'findings.jsonl'), (r) => r.filter((x) => 'record_kind' in x).length >= 2, 60_000);
      } finally {
        expect(await serve.stop()).toBe(0);
      }
      const dataDir = serve.dataDir;
      const { code, out } = await verifyJson(dataDir);
      expect(out.violations).toEqual([]);
      expect(code).toBe(0);
      expect(checked(out, 'window-fate')).toBeGreaterThan(0);
      const judged = (await jsonLines<{ method?: { kind: string } }>(join(dataDir, 'findings.jsonl'))).filter((r) => r.method?.kind === 'judged');
      expect(judged.length).toBeGreaterThan(0);
    } finally {
      await model.close();
    }
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
