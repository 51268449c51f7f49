import { afterEach, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/findings/schema.ts';
import { L1_OUTCOME, L3_TOOL_OUTPUTS } from '../../src/judge/walk/layer-questions.ts';
import { evaluationEvent } from '../../src/sinks/otlp/evaluation-event.ts';
import { agentRun } from '../windows/builders.ts';
import { deployRun, harness, judgeAll, type Harness } from './judge-harness.ts';
import { answers, completion, type ScriptedReply, type ScriptedServer } from './scripted-chat-server.ts';
import { cleanRun, layerFindings, requestOf, summaryOf, valuesOf, walkScript } from './walk/walk-harness.ts';

// The judge's own accounting: what a finding says it rests on, what it paid, where a problem
// began. The scripted Chat Completions server stands in for the judge's LLM endpoint (no LLM
// can run here); windows, client, ledger and findings are the real thing.

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function setup(script: (body: Record<string, unknown>) => ScriptedReply, over: Record<string, unknown> = {}): Promise<Harness> {
  const h = await harness(script, {}, over);
  servers.push(h.server);
  return h;
}

/** The window anchor a judged finding names in its identity basis (`window:<kind>@span:<trace>/<span>`). */
const anchorOf = (f: Finding): string => /^window:[a-z]+@span:(.+)$/.exec(f.id_basis!.find((b) => b.startsWith('window:'))!)![1]!;
const support = (f: Finding) => valuesOf(f).support as { selected: unknown; event_uris: string[] };

describe("a model's selected support id is recorded, never promoted into evidence", () => {
  it('trace questions: evidence_refs[0] and the evaluation event parent stay the window anchor when the model selects another event', async () => {
    // Every answer "yes", supported by e1: the window's first event, not its anchor.
    const h = await setup(() => ({ body: completion(answers(Object.fromEntries([0, 1, 2, 3, 4, 5, 6, 7].map((i) => [i, { letter: 'A', support: 'e1' }])))) }));
    const { findings } = await judgeAll(h.dataDir, h.cfg, [deployRun()]);
    const judged = findings.filter((f) => f.method.kind === 'judged');
    expect(judged.length).toBeGreaterThan(0);
    let differs = 0;
    for (const f of judged) {
      const anchor = anchorOf(f);
      expect(support(f).selected).toBe('e1');
      expect(support(f).event_uris).toHaveLength(1);
      if (support(f).event_uris[0] !== `span:${anchor}`) differs++;
      expect(f.evidence_refs[0]!.uri, f.area).toBe(`span:${anchor}`);
      const [traceId, spanId] = anchor.split('/');
      expect(evaluationEvent(f, 'findings', 'internal').parent).toEqual({ traceId, spanId });
    }
    // The test is about a selection that is not the anchor.
    expect(differs).toBeGreaterThan(0);
  });

  it('layer answers: the same, the selected event rides in support only', async () => {
    const h = await setup(walkScript({ [L1_OUTCOME.id]: { support: 'e3' } }), { walk: { enabled: true } });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [cleanRun()]);
    const l1 = layerFindings(findings, 'clean-run').find((f) => f.area === L1_OUTCOME.id)!;
    const anchor = anchorOf(l1);
    expect(support(l1).selected).toBe('e3');
    expect(support(l1).event_uris).not.toContain(`span:${anchor}`);
    expect(l1.evidence_refs[0]!.uri).toBe(`span:${anchor}`);
    const [traceId, spanId] = anchor.split('/');
    expect(evaluationEvent(l1, 'findings', 'internal').parent).toEqual({ traceId, spanId });
  });
});

describe('unknown token usage stays unknown', () => {
  it('a walk whose calls reported no usage says null tokens, not 0, and counts the attempts of unknown usage', async () => {
    const h = await setup(walkScript({}, { usage: null }), { walk: { enabled: true } });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [cleanRun()]);
    const cost = valuesOf(summaryOf(findings, 'clean-run')!).cost as Record<string, unknown>;
    expect(cost).toMatchObject({ calls: 1, attempts: 1, prompt_tokens: null, completion_tokens: null, unknown_usage_attempts: 1 });
  });

  it('reported usage is summed as before', async () => {
    const h = await setup(walkScript(), { walk: { enabled: true } });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [cleanRun()]);
    expect(valuesOf(summaryOf(findings, 'clean-run')!).cost).toEqual({
      calls: 1,
      attempts: 1,
      prompt_tokens: 900,
      completion_tokens: 60,
      unknown_usage_attempts: 0,
    });
  });
});

describe('first_problem_origin names a problem only when no earlier candidate went unread', () => {
  const YES = { letter: 'A', p: 0.97 } as const;
  const l3Of = (fs: Finding[], key: string) => summaryOf(fs, key)!.layer_verdicts!.find((v) => v.layer === 'L3')!;

  it('the earliest tool output not read (windows-per-layer cap), a later one failed: unknown, naming the unread one', async () => {
    const t = { ...agentRun(3), key: 'three-lookups' };
    const h = await setup(walkScript({ [L3_TOOL_OUTPUTS.id]: YES }), { walk: { enabled: true, stopEarly: false, maxWindowsPerLayer: 2 } });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [t]);
    const l3 = l3Of(findings, 'three-lookups');
    // L3 reads from the end: steps 3 and 2 are read and fail, step 1 (the earliest) is not read.
    expect(l3.windows!.map((w) => [w.anchor.split('/')[1], w.fate])).toEqual([
      ['0000000000000004', 'judged'],
      ['0000000000000003', 'judged'],
      ['0000000000000002', 'not-read'],
    ]);
    expect(l3.verdict).toBe('fail');
    expect(l3.first_problem_origin).toBe('unknown');
    expect(l3.first_problem_origin_reason).toBe(`earlier-candidate-not-read@${t.steps[1]!.traceId}/0000000000000002`);
  });

  it('an earlier candidate read but not decided (unsure): unknown, naming it and why', async () => {
    const t = { ...agentRun(3), key: 'unsure-first' };
    const base = walkScript({ [L3_TOOL_OUTPUTS.id]: YES });
    const script = (body: Record<string, unknown>): ScriptedReply => {
      const r = requestOf(body);
      const doc = JSON.parse((body.messages as { content: string }[])[1]!.content) as {
        window: { anchor_event?: string; events: { id: string; content: string }[] };
      };
      const anchor = doc.window.events.find((e) => e.id === doc.window.anchor_event);
      if (r.role === 'layer' && r.questionIds[0] === L3_TOOL_OUTPUTS.id && anchor?.content.includes('result 0') === true)
        return { body: completion([{ letter: 'C', support: 'unresolved', p: 0.9 }]) };
      return base(body);
    };
    const h = await setup(script, { walk: { enabled: true, stopEarly: false, maxWindowsPerLayer: 3 } });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [t]);
    const l3 = l3Of(findings, 'unsure-first');
    expect(l3.verdict).toBe('fail');
    expect(l3.first_problem_origin).toBe('unknown');
    expect(l3.first_problem_origin_reason).toBe(`earlier-candidate-undecided@${t.steps[1]!.traceId}/0000000000000002:answer:unsure`);
  });

  it('every earlier candidate read and sound: the earliest failed output is the origin', async () => {
    const t = { ...agentRun(3), key: 'all-read' };
    const h = await setup(walkScript({ [L3_TOOL_OUTPUTS.id]: YES }), { walk: { enabled: true, stopEarly: false, maxWindowsPerLayer: 3 } });
    const { findings } = await judgeAll(h.dataDir, h.cfg, [t]);
    const l3 = l3Of(findings, 'all-read');
    expect(l3.first_problem_origin).toBe(`${t.steps[1]!.traceId}/0000000000000002`);
    expect(l3.first_problem_origin_reason).toBeUndefined();
  });
});
