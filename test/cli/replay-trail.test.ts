import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { rawSpans, stringAttr, trailFiles } from '../helpers/trail.ts';
import { trailCorpus } from '../helpers/trail-corpus.ts';

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

const corpus = trailCorpus();

describe(`replay of the real TRAIL traces (${corpus.description})`, () => {
  const files = trailFiles();
  const eachFile = files.map((file) => [file.split('/').pop()!, file] as const);
  const trajectoryOf = (file: string) => {
    const traceId = rawSpans(file)[0]!.traceId;
    return trajectories.find((r) => r.traceIds.includes(traceId))!;
  };
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
      expect(line).toMatch(new RegExp(`^replay: (done: )?\\d+/${files.length} files, \\d+ spans \\(0 rejected\\)`));
    }
    expect(run.code).toBe(0);
    trajectoryText = await readFile(out, 'utf8');
    findingsText = await readFile(findings, 'utf8');
    trajectories = lines<TrajectoryRow>(trajectoryText);
  });

  it('gives one trajectory per trace', () => {
    expect(files).toHaveLength(corpus.files.length);
    expect(trajectories.map((t) => t.traceIds)).toEqual(expect.arrayContaining(corpus.files.map((f) => [f.traceId])));
    expect(trajectories).toHaveLength(files.length);
  });

  it.each(eachFile)('%s: its trajectory holds every span once', (_, file) => {
    const spans = rawSpans(file);
    expect(
      trajectoryOf(file)
        .steps.map((s) => s.id)
        .sort(),
    ).toEqual([...new Set(spans.map((s) => s.spanId))].sort());
  });

  it('keeps one step for a span exported twice (72822db6 exports one span twice; it is in the repository)', () => {
    const file = files.find((f) => f.includes('72822db6e120878d916b515c2501246b'))!;
    const spans = rawSpans(file);
    expect(spans.length - new Set(spans.map((s) => s.spanId)).size).toBe(1);
    expect(trajectoryOf(file).steps).toHaveLength(spans.length - 1);
  });

  it.each(eachFile)('%s: gives exactly its TOOL spans tool steps, with their tool name and parsed arguments', (_, file) => {
    const spans = rawSpans(file);
    const steps = trajectoryOf(file).steps;
    const toolSpans = spans.filter((span) => stringAttr(span, 'openinference.span.kind') === 'TOOL');
    expect(
      steps
        .filter((s) => s.kind === 'tool')
        .map((s) => s.id)
        .sort(),
    ).toEqual(toolSpans.map((s) => s.spanId).sort());
    for (const span of toolSpans) {
      const step = steps.find((s) => s.id === span.spanId)!;
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
  });

  it.each(eachFile)('%s: gives exactly its errored spans an error', (_, file) => {
    const failed = (span: ReturnType<typeof rawSpans>[number]) => span.status?.code === 2 || (span.events ?? []).some((e) => e.name === 'exception');
    const want = [
      ...new Set(
        rawSpans(file)
          .filter(failed)
          .map((s) => s.spanId),
      ),
    ].sort();
    expect(
      trajectoryOf(file)
        .steps.filter((s) => s.error !== undefined)
        .map((s) => s.id)
        .sort(),
    ).toEqual(want);
  });

  it.each(eachFile)('%s: is incomplete, for the orphan reason, exactly when a parent was never exported', (_, file) => {
    const spans = rawSpans(file);
    const ids = new Set(spans.map((s) => s.spanId));
    const hasOrphan = spans.some((s) => s.parentSpanId && !ids.has(s.parentSpanId));
    const t = trajectoryOf(file);
    expect(t.incompleteReasons.includes('orphan-parents')).toBe(hasOrphan);
    if (hasOrphan) expect(t.complete).toBe(false);
  });

  it('has one trace with never-exported parents among them (72822db6, in the repository), so the rule above is exercised', () => {
    const orphaned = files.filter((file) => {
      const spans = rawSpans(file);
      const ids = new Set(spans.map((s) => s.spanId));
      return spans.some((s) => s.parentSpanId && !ids.has(s.parentSpanId));
    });
    expect(orphaned.map((f) => f.split('/').pop())).toEqual(['72822db6e120878d916b515c2501246b.otlp.json.gz']);
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
