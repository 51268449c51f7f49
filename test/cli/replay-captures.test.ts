/**
 * Replays real framework captures (raw OTLP/HTTP protobuf bodies as the frameworks exported
 * them against a scripted stand-in model, copied from the issue-19 matrix runs) and checks that
 * every scripted tool call's step carries the call's arguments, wherever the capture holds them:
 * unwrapped from a recorded call (OpenLLMetry, LlamaIndex, smolagents), or taken from the LLM
 * request the step answers where the tool span holds only the bare value (LangGraph Python and
 * LangChain.js with OpenInference).
 */
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const FIXTURES = new URL('../fixtures/captures/', import.meta.url).pathname;

/** The calls the stand-in model made, in order. */
const SCRIPT = [
  ['get_weather', { city: 'Paris' }],
  ['get_weather', { city: 'Paris' }],
  ['lookup_order', { order_id: '42' }],
  ['get_weather', { city: 'Rome' }],
] as const;

interface ArgsRow {
  raw: string;
  parsed?: unknown;
  recorded?: string;
  digest: string;
  source?: string;
  captured?: string;
}
interface StepRow {
  id: string;
  kind: string;
  toolName?: string;
  toolCallId?: string;
  toolCallIdDerived?: boolean;
  args?: ArgsRow;
}
interface FindingRow {
  area: string;
  observation?: { kind: string; tool_name?: string; count?: number };
}

async function replay(framework: string): Promise<{ tools: StepRow[]; findings: FindingRow[] }> {
  const dir = await mkdtemp(join(tmpdir(), `trajwatch-capture-${framework}-`));
  const files = (await readdir(join(FIXTURES, framework)))
    .filter((f) => f.endsWith('.pb'))
    .sort()
    .map((f) => join(FIXTURES, framework, f));
  const out = join(dir, 'trajectories.jsonl');
  const findingsOut = join(dir, 'findings.jsonl');
  const run = await runCli(['replay', ...files, '--trajectories', out, '--findings', findingsOut]);
  expect(run.code).toBe(0);
  const rows = (text: string) =>
    text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown);
  const trajectories = rows(await readFile(out, 'utf8')) as { steps: StepRow[] }[];
  expect(trajectories).toHaveLength(1);
  const tools = trajectories[0]!.steps.filter((s) => s.kind === 'tool' && SCRIPT.some(([name]) => name === s.toolName));
  return { tools, findings: rows(await readFile(findingsOut, 'utf8')) as FindingRow[] };
}

/** The scripted calls' steps paired with what the script asked, per tool name in order. */
function pairs(tools: StepRow[]): [StepRow, unknown][] {
  const byName = (name: string) => tools.filter((s) => s.toolName === name);
  const out: [StepRow, unknown][] = [];
  for (const name of ['get_weather', 'lookup_order']) {
    const want = SCRIPT.filter(([n]) => n === name).map(([, args]) => args);
    expect(byName(name)).toHaveLength(want.length);
    byName(name).forEach((s, i) => out.push([s, want[i]]));
  }
  return out;
}

function expectRepetitionAndNoMalformed(findings: FindingRow[]): void {
  const repetition = findings.filter((f) => f.observation?.kind === 'tool-repetition');
  expect(repetition.map((f) => [f.observation!.tool_name, f.observation!.count])).toEqual([['get_weather', 2]]);
  expect(findings.filter((f) => f.area === 'malformed-structure')).toEqual([]);
}

describe('replay of real framework captures: a tool step carries the call it made', () => {
  it.each([
    ['openllmetry', '{"args": [], "kwargs": '],
    ['llamaindex', '{"kwargs": '],
    ['smolagents', '{"args": [], "sanitize_inputs_outputs": true, "kwargs": '],
  ])('%s: the recorded call is read as its keyword arguments, raw kept as captured', async (framework, wrapper) => {
    const { tools, findings } = await replay(framework);
    for (const [step, want] of pairs(tools)) {
      expect(step.args!.parsed).toEqual(want);
      expect(step.args!.recorded).toBe('kwargs');
      expect(step.args!.raw.startsWith(wrapper)).toBe(true);
      expect(step.args!.source).toBeUndefined();
    }
    expectRepetitionAndNoMalformed(findings);
  });

  it.each([
    ['langgraph', true],
    ['langchain', false],
  ])('%s: the bare value the tool span holds is replaced by the request it answers, marked derived', async (framework, requestIds) => {
    const { tools, findings } = await replay(framework);
    for (const [step, want] of pairs(tools)) {
      expect(step.args!.parsed).toEqual(want);
      expect(step.args!.source).toBe('request');
      // the span's own text stays visible: the bare value of the one argument
      expect(step.args!.captured).toBe(Object.values(want as object)[0]);
      expect(JSON.parse(step.args!.raw)).toEqual(want);
      // LangGraph Python's requests carry call ids (the tool spans do not); LangChain.js's carry none
      expect(step.toolCallIdDerived === true).toBe(requestIds);
    }
    expectRepetitionAndNoMalformed(findings);
  });
});
