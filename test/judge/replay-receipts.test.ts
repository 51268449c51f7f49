import { afterEach, describe, expect, it } from 'vitest';
import { findingJsonSchema } from '../../src/findings/json-schema.ts';
import { FindingSchema, type Finding } from '../../src/findings/schema.ts';
import { canonicalJson } from '../../src/core/canonical-json.ts';
import { harness, judgeAll, valuesOf, type Harness } from './judge-harness.ts';
import { answers, completion } from './scripted-chat-server.ts';

// The scripted Chat Completions server stands in for the judge's LLM endpoint, which cannot run here.

const started: Harness[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((h) => h.server.close()));
});

const PRICING = { inputPerMillionTokens: 1, outputPerMillionTokens: 10, currency: 'USD' };
const judged = (fs: readonly Finding[]) => fs.filter((f) => f.method.kind === 'judged');

/** What a consumer summing receipts reads: each window's receipt once (its eight findings share it). */
function summedCost(fs: readonly Finding[]): number {
  const byWindow = new Map<string, number>();
  for (const f of judged(fs)) {
    const receipt = valuesOf(f).receipt as { cost: number | null } | null;
    byWindow.set(`${canonicalJson(valuesOf(f).ledger_key)}|${f.replay === undefined ? 'paid' : 'replay'}`, receipt?.cost ?? 0);
  }
  return [...byWindow.values()].reduce((a, b) => a + b, 0);
}

describe('exact replay pays nothing and says so', () => {
  it('marks every replayed judged finding as a replay with zero new physical calls, keeping the original receipt as history', async () => {
    const h = await harness(() => ({ body: completion(answers()) }), { pricing: PRICING });
    started.push(h);
    const first = await judgeAll(h.dataDir, h.cfg);
    const windows = h.server.requests.length;
    expect(windows).toBeGreaterThanOrEqual(2);
    for (const f of judged(first.findings)) {
      expect(f.replay).toBeUndefined();
      expect(valuesOf(f).receipt).toMatchObject({ attempts: 1, totalTokens: 960 });
    }
    const paid = first.dp.stats().cost.USD!;
    expect(summedCost(first.findings)).toBeCloseTo(paid, 12);

    const again = await judgeAll(h.dataDir, h.cfg);
    expect(h.server.requests.length).toBe(windows);
    expect(again.dp.stats()).toMatchObject({ calls: 0, attempts: 0, replays: windows, cost: {} });
    expect(again.calls).toEqual([]);
    expect(judged(again.findings)).toHaveLength(windows * 8);
    const originals = new Map(judged(first.findings).map((f) => [f.finding_id, f]));
    for (const f of judged(again.findings)) {
      expect(FindingSchema.safeParse(f).success).toBe(true);
      const original = originals.get(f.finding_id)!;
      expect(original).toBeDefined();
      expect(f.replay).toEqual({ new_physical_calls: 0, original_receipt: valuesOf(original).receipt, original_recorded_at: expect.any(String) });
      expect(valuesOf(f).receipt).toBeNull();
    }
    // Summing receipts over both runs counts each paid call once.
    expect(summedCost([...first.findings, ...again.findings])).toBeCloseTo(paid, 12);
  });

  it('documents the replay marker in the finding JSON Schema', () => {
    const schema = findingJsonSchema() as { properties: Record<string, { properties?: Record<string, unknown> }>; required: string[] };
    expect(Object.keys(schema.properties.replay?.properties ?? {}).sort()).toEqual(['new_physical_calls', 'original_receipt', 'original_recorded_at']);
    expect(schema.required).not.toContain('replay');
  });
});
