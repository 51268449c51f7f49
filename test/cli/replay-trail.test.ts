import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { rawSpans, stringAttr, trailFiles } from '../helpers/trail.ts';

interface StepRow {
  id: string;
  traceId: string;
  parentId?: string;
  kind: string;
  toolName?: string;
  args?: { raw: string; parsed?: unknown };
  error?: { source: string; message?: string };
}
interface TrajectoryRow {
  key: string;
  traceIds: string[];
  complete: boolean;
  incompleteReasons: string[];
  steps: StepRow[];
}

function lines<T>(text: string): T[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as T);
}

describe('replay of the 26 real TRAIL traces', () => {
  const files = trailFiles();
  let trajectories: TrajectoryRow[];
  let trajectoryText: string;
  let findingsText: string;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'trajwatch-replay-'));
    const out = join(dir, 'trajectories.jsonl');
    const findings = join(dir, 'findings.jsonl');
    const run = await runCli(['replay', ...files, '--trajectories', out, '--findings', findings]);
    // stderr carries only progress lines (printed when the replay takes over a second).
    for (const line of run.stderr.split('\n').filter((l) => l !== '')) {
      expect(line).toMatch(/^replay: (done: )?\d+\/26 files, \d+ spans \(0 rejected\)/);
    }
    expect(run.code).toBe(0);
    trajectoryText = await readFile(out, 'utf8');
    findingsText = await readFile(findings, 'utf8');
    trajectories = lines<TrajectoryRow>(trajectoryText);
  });

  it('gives one trajectory per trace, holding every span once (one trace exports a span twice)', () => {
    expect(files).toHaveLength(26);
    expect(trajectories).toHaveLength(26);
    for (const file of files) {
      const spans = rawSpans(file);
      const t = trajectories.find((r) => r.traceIds.includes(spans[0]!.traceId))!;
      expect(t.steps.map((s) => s.id).sort()).toEqual([...new Set(spans.map((s) => s.spanId))].sort());
    }
  });

  it('gives tool steps their tool name and parsed arguments', () => {
    let tools = 0;
    for (const file of files) {
      for (const span of rawSpans(file)) {
        if (stringAttr(span, 'openinference.span.kind') !== 'TOOL') continue;
        tools++;
        const step = trajectories.flatMap((t) => t.steps).find((s) => s.id === span.spanId)!;
        expect(step.kind).toBe('tool');
        expect(step.toolName).toBe(stringAttr(span, 'tool.name'));
        const input = stringAttr(span, 'input.value');
        if (input !== undefined) {
          expect(step.args!.raw).toBe(input);
          // smolagents' recorded call `{"args": [...], ..., "kwargs": {...}}`: its keyword
          // arguments when it has no positional ones
          const captured = JSON.parse(input) as { args: unknown[]; kwargs: unknown };
          expect(step.args!.parsed).toEqual(captured.args.length === 0 ? captured.kwargs : captured);
        }
      }
    }
    expect(tools).toBeGreaterThan(50);
  });

  it('gives errored tool spans their error', () => {
    let errored = 0;
    for (const file of files) {
      for (const span of rawSpans(file)) {
        const failed = span.status?.code === 2 || (span.events ?? []).some((e) => e.name === 'exception');
        if (!failed) continue;
        errored++;
        const step = trajectories.flatMap((t) => t.steps).find((s) => s.id === span.spanId)!;
        expect(step.error, `span ${span.spanId}`).toBeDefined();
      }
    }
    expect(errored).toBeGreaterThan(0);
  });

  it('says a trace with never-exported parents is incomplete, for the orphan reason', () => {
    let orphaned = 0;
    for (const file of files) {
      const spans = rawSpans(file);
      const ids = new Set(spans.map((s) => s.spanId));
      const hasOrphan = spans.some((s) => s.parentSpanId && !ids.has(s.parentSpanId));
      const t = trajectories.find((r) => r.traceIds.includes(spans[0]!.traceId))!;
      expect(t.incompleteReasons.includes('orphan-parents')).toBe(hasOrphan);
      if (hasOrphan) {
        orphaned++;
        expect(t.complete).toBe(false);
      }
    }
    expect(orphaned).toBeGreaterThan(0);
  });

  it('is deterministic: a second replay writes byte-identical trajectories and findings', async () => {
    const out = join(dir, 'again.jsonl');
    const findings = join(dir, 'again-findings.jsonl');
    const run = await runCli(['replay', ...files.slice().reverse(), '--trajectories', out, '--findings', findings]);
    expect(run.code).toBe(0);
    const sortLines = (text: string) => text.split('\n').sort().join('\n');
    expect(sortLines(await readFile(out, 'utf8'))).toBe(sortLines(trajectoryText));
    expect(sortLines(await readFile(findings, 'utf8'))).toBe(sortLines(findingsText));
  });
});

describe('replay with bad input', () => {
  it('names the bad file, still writes the good ones, and exits 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-replay-bad-'));
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"resourceSpans": [');
    const out = join(dir, 'out.jsonl');
    const run = await runCli(['replay', bad, trailFiles()[0]!, join(dir, 'missing.json'), '--trajectories', out]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`replay: ${bad}:`);
    expect(run.stderr).toMatch(/missing\.json: cannot read/);
    expect(lines(await readFile(out, 'utf8'))).toHaveLength(1);
  });

  it('exits 2 with usage when no file is given', async () => {
    const run = await runCli(['replay']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/no input files/);
  });
});
