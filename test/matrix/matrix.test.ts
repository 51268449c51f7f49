/**
 * The configuration matrix (issue 29, "Works as one"): the corpus through `trajwatch replay`
 * and through real `trajwatch serve` processes under combinations of seven factors — source
 * (replay, serve over OTLP/HTTP, two serve instances on a Kafka source with the repartition by
 * session), judge off/on, walk off/on, the remote sink (none, Kafka, OTLP evaluation events),
 * the local logs' audience, the remote sink's audience, and retention (default, 4 KiB
 * segments). Each combination is run to its end and stopped, then `trajwatch verify` runs on
 * every data directory it wrote (`--kafka` when the Kafka sink is on) and must exit 0; no
 * combination may stall (every span taken in and everything quiet within a bound, every
 * request answered 200, every process exiting 0) or refuse anything (every refusal and
 * dead-letter counter zero, nothing in audience-refused.jsonl, no refused line from replay).
 *
 * Which combinations: the full product is 432; the constraints (`allowed` in combination.ts:
 * the walk needs the judge; replay has no remote sink and no retention; a remote audience
 * only with a remote sink) leave 126, holding 113 pairs of levels. The pairwise subset
 * (test/helpers/pairwise.ts, greedy and deterministic) runs 11 of them, in which every one of
 * those pairs appears; plus the judge + walk + external view on every sink (local, Kafka and
 * OTLP events together) for HTTP and Kafka, the combination no test ran before. The
 * figures are asserted below, so a change of factors updates this header or fails.
 *
 * The judge's LLM endpoint is a stand-in (test/judge/scripted-chat-server.ts with the walk's
 * script): no LLM runs here. Kafka combinations need the broker (TRAJWATCH_TEST_KAFKA).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { coveredPairs } from '../helpers/pairwise.ts';
import { kafkaForTests } from '../helpers/kafka.ts';
import { combinations, EXTRA, FACTORS, MATRIX, type RunCombination, title } from './combination.ts';
import { type RunResult, refusals, runHttp, runKafka, runReplay, total } from './run.ts';
import { verify } from './verify.ts';

const brokers = await kafkaForTests();
const started = Date.now();

function report(name: string, figures: Record<string, unknown>): void {
  process.stdout.write(`[matrix] ${name}: ${JSON.stringify(figures)}\n`);
}

describe('the configuration matrix: which combinations run', () => {
  it('the pairwise subset holds every pair of levels the constraints allow, and the figures in the header', () => {
    const covered = coveredPairs(FACTORS, MATRIX.combinations);
    expect(MATRIX.fullProduct).toBe(432);
    expect(MATRIX.allowed).toBe(126);
    expect(MATRIX.pairs).toBe(113);
    expect(covered.size).toBe(MATRIX.pairs);
    expect(MATRIX.combinations).toHaveLength(11);
    expect(combinations()).toHaveLength(13);
  });

  it('judge + walk + an external view on every sink runs for every source', () => {
    for (const source of FACTORS.source) {
      const run = combinations().filter((c) => c.source === source && c.walk === 'on' && c.localAudience === 'external');
      expect(
        run.some((c) => c.sinks === (source === 'replay' ? 'local' : 'all') && c.remoteAudience === (source === 'replay' ? 'none' : 'external')),
        source,
      ).toBe(true);
    }
    expect(EXTRA.every((c) => c.judge === 'on')).toBe(true);
  });
});

function run(c: RunCombination): Promise<RunResult> {
  if (c.source === 'replay') return runReplay(c);
  if (c.source === 'http') return runHttp(c, brokers);
  return runKafka(c, brokers!);
}

function refusedRecords(dataDir: string): string[] {
  const path = join(dataDir, 'audience-refused.jsonl');
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
}

describe('the configuration matrix: every combination runs to its end and `trajwatch verify` passes on what it wrote', () => {
  for (const c of combinations()) {
    const needsBroker = c.source === 'kafka' || c.sinks === 'kafka' || c.sinks === 'all';
    it.runIf(!needsBroker || brokers !== undefined)(
      title(c),
      async () => {
        const t0 = Date.now();
        const r = await run(c);
        const logs = r.outputText.map((o) => o.slice(-3000)).join('\n---\n');
        // Ran to its end: every request answered 200, every process exited 0.
        expect(
          r.statuses.filter((s) => s !== 200),
          logs,
        ).toEqual([]);
        expect(r.exitCodes, logs).toEqual(r.exitCodes.map(() => 0));
        // Nothing refused silently: no refusal or dead letter counted, no record quarantined, no refused line.
        expect(r.metrics.flatMap(refusals), logs).toEqual([]);
        expect(r.outputs.flatMap((o) => refusedRecords(o.dataDir))).toEqual([]);
        expect(r.outputText.join('\n')).not.toMatch(/audience-strip-failed|refused by an external view/);
        if (c.source === 'replay') expect(r.outputText[0]).toMatch(/replay: done: (\d+)\/\1 files, \d+ spans \(0 rejected\)/);
        const findings = r.metrics.reduce((n, s) => n + total(s, 'trajwatch_findings_total'), 0);
        if (c.source !== 'replay') expect(findings, logs).toBeGreaterThan(0);
        if (c.sinks === 'otlp' || c.sinks === 'all') {
          const exported = r.metrics.reduce((n, s) => n + total(s, 'trajwatch_otlp_evaluations_exported_total'), 0);
          expect(r.otlpRecords).toBeGreaterThan(0);
          expect(r.otlpRecords).toBe(exported);
        }
        if (c.judge === 'on') expect(r.judgeRequests, logs).toBeGreaterThan(0);
        // Every data directory passes verify.
        const verified = [];
        for (const o of r.outputs) {
          const v = await verify(o, { kafka: c.sinks === 'kafka' || c.sinks === 'all' });
          expect(v.violations, `trajwatch verify on ${o.dataDir}:\n${v.text}`).toEqual([]);
          expect(v.code, v.text).toBe(0);
          expect(v.summary?.ok, v.text).toBe(true);
          // It read what the combination wrote: trajectories, and manifests checked against their capture.
          expect(v.checked['revision-unique'], v.text).toBeGreaterThan(0);
          expect(v.checked['manifest-vs-capture'], v.text).toBeGreaterThan(0);
          verified.push(v.checked);
        }
        report(title(c), {
          requests: r.requestsSent,
          spans: r.spansSent,
          findings,
          judgeRequests: r.judgeRequests,
          otlpRecords: r.otlpRecords,
          quietSeconds: r.quietMs / 1000,
          seconds: (Date.now() - t0) / 1000,
          verified,
        });
      },
      240_000,
    );
  }
});

afterAll(() => report('wall time', { seconds: (Date.now() - started) / 1000, combinations: combinations().length }));
