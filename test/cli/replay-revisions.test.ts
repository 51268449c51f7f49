import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

/**
 * Revisions and late duplicates through `trajwatch replay`: one OTLP/JSON request per line,
 * closed by the spans' own times (quiet period 2 s after the root ended).
 */

const T1 = '1'.repeat(32);
const T2 = '2'.repeat(32);
const T3 = '3'.repeat(32);
const ROOT = 'a'.repeat(16);

interface SpanSpec {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  endSec: number;
  attrs?: Record<string, string>;
}

function span(s: SpanSpec) {
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId === undefined ? {} : { parentSpanId: s.parentSpanId }),
    name: s.name,
    kind: 1,
    startTimeUnixNano: nanos(s.endSec - 0.5),
    endTimeUnixNano: nanos(s.endSec),
    attributes: Object.entries(s.attrs ?? {}).map(([key, v]) => ({ key, value: { stringValue: v } })),
    status: {},
  };
}

const nanos = (sec: number) => String(BigInt(Math.round(sec * 1000)) * 1_000_000n);

function request(...spans: SpanSpec[]): string {
  return JSON.stringify({
    resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ scope: { name: 't' }, spans: spans.map(span) }] }],
  });
}

const tool = (traceId: string, spanId: string, name: string, endSec: number, extra: Record<string, string> = {}): SpanSpec => ({
  traceId,
  spanId,
  parentSpanId: ROOT,
  name: `execute_tool ${name}`,
  endSec,
  attrs: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, ...extra },
});
const root = (traceId: string, endSec: number): SpanSpec => ({
  traceId,
  spanId: ROOT,
  name: 'invoke_agent a',
  endSec,
  attrs: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'a' },
});

interface Row {
  key: string;
  revision: number;
  complete: boolean;
  incompleteReasons: string[];
  refusedSpans?: number;
  conflicts?: unknown[];
  steps: { id: string }[];
}

async function replay(lines: string[], config?: Record<string, unknown>): Promise<{ trajectories: Row[]; findings: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-revisions-'));
  const input = join(dir, 'in.jsonl');
  await writeFile(input, lines.join('\n') + '\n');
  const out = join(dir, 'trajectories.jsonl');
  const findings = join(dir, 'findings.jsonl');
  const configArgs: string[] = [];
  if (config !== undefined) {
    await writeFile(join(dir, 'config.json'), JSON.stringify({ dataDir: join(dir, 'data'), ...config }));
    configArgs.push('--config', join(dir, 'config.json'));
  }
  const run = await runCli(['replay', input, '--trajectories', out, '--findings', findings, ...configArgs]);
  expect(run.code, run.stderr).toBe(0);
  const trajectories = (await readFile(out, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Row);
  return { trajectories, findings: await readFile(findings, 'utf8') };
}

describe('replay: a later revision of an incomplete capture stays incomplete', () => {
  it('a refused span (zero span id), then a late span: revision 2 keeps refused-spans, and no absence is claimed', async () => {
    const { trajectories, findings } = await replay([
      // Revision 1: an ungated send, and a span refused for its all-zero span id.
      request(tool(T1, 'b'.repeat(16), 'send_email', 1), { ...tool(T1, '0'.repeat(16), 'approve', 0.8) }, root(T1, 1.5)),
      // Another trace moves the event clock past the quiet period: revision 1 closes.
      request(root(T2, 10)),
      // A late span of the first trace.
      request(tool(T1, 'c'.repeat(16), 'web_search', 10.5)),
    ]);
    const revs = trajectories.filter((t) => t.key === T1);
    expect(revs.map((t) => [t.revision, t.complete, t.incompleteReasons, t.refusedSpans])).toEqual([
      [1, false, ['refused-spans'], 1],
      [2, false, ['refused-spans'], 1],
    ]);
    expect(revs[1]!.steps).toHaveLength(3);
    // The refused span may have been the gate: "no gate before the send" is not claimed, and
    // each revision's manifest says why it was not.
    const records = findings
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.filter((r) => r['record_kind'] === undefined && r['area'] === 'unguarded-send')).toEqual([]);
    const manifests = records.filter((r) => r['record_kind'] === 'analysis-manifest' && (r['subject'] as { trajectory_key: string }).trajectory_key === T1);
    expect(manifests).toHaveLength(2);
    for (const m of manifests) {
      expect((m['checks'] as { check: string }[]).find((c) => c.check === 'unguarded-send')).toMatchObject({
        status: 'unavailable',
        reason: 'incomplete-capture',
      });
    }
  });

  it('a capture conflict, then a late span: revision 2 carries the conflict', async () => {
    const { trajectories } = await replay([
      request(tool(T1, 'b'.repeat(16), 'web_search', 1, { 'gen_ai.tool.call.result': 'one' }), root(T1, 1.5)),
      request(tool(T1, 'b'.repeat(16), 'web_search', 1, { 'gen_ai.tool.call.result': 'two' })),
      request(root(T2, 10)),
      request(tool(T1, 'c'.repeat(16), 'web_search', 10.5)),
    ]);
    const revs = trajectories.filter((t) => t.key === T1);
    expect(revs.map((t) => [t.revision, t.conflicts?.length])).toEqual([
      [1, 1],
      [2, 1],
    ]);
  });

  it('a late exact duplicate export opens no revision, inside or past the late-span window', async () => {
    const first = request(tool(T1, 'b'.repeat(16), 'web_search', 1), root(T1, 1.5));
    const { trajectories } = await replay([
      first,
      request(root(T2, 10)),
      first, // an SDK retrying an export it thinks timed out
      request(root(T3, 200)), // past lateSpanWindowMs (60 s): the steps are let go, their digests kept
      first,
    ]);
    expect(trajectories.filter((t) => t.key === T1).map((t) => t.revision)).toEqual([1]);
    expect(trajectories).toHaveLength(3);
  });
});

describe('replay: a key the assembler let go is not new when its spans come again', () => {
  it('a root re-sent after its key was forgotten (maxRememberedKeys) is a revision marked previous-revision-unknown, claiming no absence', async () => {
    const { trajectories, findings } = await replay(
      [
        request(tool(T1, 'b'.repeat(16), 'send_email', 1, { 'gen_ai.tool.call.result': 'sent' }), root(T1, 1.5)),
        request(root(T2, 10)), // revision 1 of T1 closes
        request(root(T3, 20)), // T2 closes: T1, the oldest key, is let go
        request(root(T1, 1.5)), // a queue re-sending T1's root alone
      ],
      { assembler: { maxRememberedKeys: 1 } },
    );
    const revs = trajectories.filter((t) => t.key === T1);
    expect(revs.map((t) => [t.revision, t.complete, t.incompleteReasons, t.steps.length])).toEqual([
      [1, true, [], 2],
      [1, false, ['previous-revision-unknown'], 1],
    ]);
    const records = findings
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const manifests = records.filter((r) => r['record_kind'] === 'analysis-manifest' && (r['subject'] as { trajectory_key: string }).trajectory_key === T1);
    expect(manifests).toHaveLength(2);
    const statuses = (m: Record<string, unknown>) => (m['checks'] as { status: string }[]).map((c) => c.status);
    expect(statuses(manifests[0]!)).toContain('none-observed');
    expect(statuses(manifests[1]!).filter((st) => st === 'none-observed')).toEqual([]);
  });
});
