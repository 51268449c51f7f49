/**
 * Nothing changes in what is found: the findings, the analysis manifests and the trajectory
 * lines of every source are byte-identical to the golden taken on main before issue 30
 * (content off the heap: long values held as byte ranges, trajectory lines spliced from bytes).
 *
 * Sources, each replayed on its own: the TRAIL dev traces of this run (the five in-repo ones
 * unless TRAJWATCH_TRAIL_CORPUS=full; the golden holds the five), every framework capture of
 * test/fixtures/frameworks (openai-v2 with its logs), every test/fixtures/captures folder, and
 * the 3,000 generated trajectories (test/helpers/generated-trajectories.ts). Each goes through
 * the protobuf decoder into the pipeline replay builds, twice (the two runs must agree), and its
 * three streams are compared with the golden: line count, sha256 of the bytes, and a short
 * digest per line so a mismatch names the source, the stream and the first line that differs.
 *
 * No field is stripped: replay's event clock closes trajectories by the spans' own times, and
 * no finding, manifest or trajectory line holds a wall-clock value.
 *
 * Regenerate the golden (only on purpose, say why in the commit):
 *   UPDATE_GOLDEN=1 vitest run test/pipeline/identical-output.test.ts
 * A golden whose `input` digest differs from this run's was taken on other input (the
 * generator or a fixture changed): the test says so before comparing outputs.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { trailCorpus } from '../helpers/trail-corpus.ts';
import {
  captureSources,
  firstDifference,
  generatedSource,
  type ReplayResult,
  replaySource,
  type Source,
  type SourceOutput,
  trailSource,
} from './identical-output.ts';

const GOLDEN_PATH = new URL('./identical-output.golden.json', import.meta.url);
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const STREAMS = ['findings', 'manifests', 'trajectories'] as const;

/** Per source: the sha256 of its request bodies (what was replayed), and what the replay wrote. */
type Golden = Record<string, { input: string; output: SourceOutput }>;

function inputDigest(source: Source): string {
  const hash = createHash('sha256');
  for (const { signal, body } of source.bodies) hash.update(`${signal}:${body.length}:`).update(body);
  return hash.digest('hex');
}

interface Replayed {
  source: Source;
  input: string;
  first: ReplayResult;
  second: ReplayResult['output'];
}

const replayed: Replayed[] = [];

beforeAll(async () => {
  // The golden holds the in-repo TRAIL traces: a full-corpus run would compare other input.
  const sources = trailCorpus().kind === 'in-repo' ? [trailSource()] : [];
  sources.push(...(await captureSources()), generatedSource());
  for (const source of sources) {
    const first = await replaySource(source);
    const second = (await replaySource(source)).output;
    replayed.push({ source, input: inputDigest(source), first, second });
  }
}, 180_000);

describe('output identical to the golden taken before issue 30', () => {
  it('every source replays to the same bytes twice', () => {
    for (const r of replayed) expect(r.second, r.source.name).toEqual(r.first.output);
  });

  it('findings, manifests and trajectory lines match the golden, source by source', () => {
    const current: Golden = Object.fromEntries(replayed.map((r) => [r.source.name, { input: r.input, output: r.first.output }]));
    if (UPDATE || !existsSync(GOLDEN_PATH)) {
      if (!UPDATE) throw new Error(`no golden at ${GOLDEN_PATH.pathname}: run UPDATE_GOLDEN=1 vitest run test/pipeline/identical-output.test.ts`);
      writeFileSync(GOLDEN_PATH, `${JSON.stringify(current, null, 2)}\n`);
      return;
    }
    const golden = JSON.parse(readFileSync(GOLDEN_PATH, 'utf8')) as Golden;
    const problems: string[] = [];
    for (const name of Object.keys(golden)) {
      if (current[name] === undefined && (name !== 'trail-dev' || trailCorpus().kind === 'in-repo')) problems.push(`${name}: in the golden, not replayed`);
    }
    for (const r of replayed) {
      const expected = golden[r.source.name];
      if (expected === undefined) {
        problems.push(`${r.source.name}: replayed, not in the golden (UPDATE_GOLDEN=1 adds it)`);
        continue;
      }
      if (expected.input !== r.input) {
        problems.push(`${r.source.name}: the input changed (sha256 ${r.input}, golden ${expected.input}): the generator or a fixture changed, not the output`);
        continue;
      }
      for (const stream of STREAMS) {
        const difference = firstDifference(expected.output[stream], r.first.output[stream], r.first.text[stream]);
        if (difference !== undefined) problems.push(`${r.source.name} ${stream}: ${difference}`);
      }
      if (JSON.stringify(expected.output.findingsByArea) !== JSON.stringify(r.first.output.findingsByArea)) {
        problems.push(
          `${r.source.name}: findings by area ${JSON.stringify(r.first.output.findingsByArea)}, golden ${JSON.stringify(expected.output.findingsByArea)}`,
        );
      }
    }
    expect(problems.join('\n')).toBe('');
  });

  it('the comparison is not vacuous: every source closes trajectories, and the generated set fires every inline check it exercises', () => {
    for (const r of replayed) {
      const { trajectories, manifests } = r.first.output;
      expect(trajectories.lines, r.source.name).toBeGreaterThan(0);
      // One manifest per closed revision: each trajectory line has its manifest.
      expect(manifests.lines, r.source.name).toBe(trajectories.lines);
    }
    const generated = replayed.find((r) => r.source.name === 'generated')!;
    expect(generated.first.output.trajectories.lines).toBe(3_000);
    const byArea = generated.first.output.findingsByArea;
    for (const area of ['error-output', 'malformed-structure', 'tool.repetition', 'fault-passthrough', 'unguarded-send']) {
      expect(byArea[area] ?? 0, area).toBeGreaterThan(0);
    }
    // What the change touches reached the output: long values, invalid UTF-8 (decoded to U+FFFD), Python-literal arguments.
    const lines = generated.first.text.trajectories;
    expect(lines.filter((l) => l.length > 64 * 1024).length).toBeGreaterThan(100);
    expect(lines.some((l) => l.includes('\ufffd'))).toBe(true);
    expect(lines.some((l) => l.includes('"capturedAs":"python-literal"'))).toBe(true);
    const frameworks = replayed.filter((r) => r.source.name.startsWith('frameworks/'));
    expect(frameworks.reduce((n, r) => n + r.first.output.findings.lines, 0)).toBeGreaterThan(frameworks.length);
  });
});
