import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CAPTURE_GAP_REASONS } from '../../src/assemble/capture-gaps.ts';
import { INCOMPLETE_REASONS } from '../../src/assemble/trajectory.ts';
import { CAPTURE_TABLE } from '../../src/checks/registry.ts';
import { manifestJsonSchema } from '../../src/findings/json-schema.ts';
import { decisionText } from '../../src/findings/capture-states.ts';
import { MANIFEST_CHECKS } from '../../src/findings/manifest-schema.ts';
import { DOC, END, START, withTable } from '../../scripts/docs/capture-table-doc.ts';
import { schemaCommand } from '../../src/cli/schema.ts';

/** What `trajwatch schema manifest` prints, parsed. */
async function printedManifestSchema(): Promise<Record<string, unknown>> {
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => (chunks.push(String(chunk)), true)) as typeof process.stdout.write;
  try {
    expect(await schemaCommand(['manifest'])).toBe(0);
  } finally {
    process.stdout.write = write;
  }
  return JSON.parse(chunks.join('')) as Record<string, unknown>;
}

describe('the capture states, documented from the capture table', () => {
  it('`trajwatch schema manifest` lists every incomplete reason and every gap kind with the checks each silences, as the registry rows say', async () => {
    const schema = await printedManifestSchema();
    const states = schema['capture_states'] as {
      incomplete: { reasons: { reason: string; means: string }[]; silences: string[] };
      gaps: { kind: string; silences: string[]; why: Record<string, { hides: boolean; why: string }> }[];
    };
    expect(states.incomplete.reasons.map((r) => r.reason)).toEqual([...INCOMPLETE_REASONS]);
    for (const r of states.incomplete.reasons) expect(r.means.length, r.reason).toBeGreaterThan(10);
    expect(states.incomplete.silences).toEqual([...MANIFEST_CHECKS]);
    expect(states.gaps.map((g) => g.kind)).toEqual([...CAPTURE_GAP_REASONS]);
    for (const g of states.gaps) {
      const kind = g.kind as (typeof CAPTURE_GAP_REASONS)[number];
      expect(g.silences, kind).toEqual(CAPTURE_TABLE.filter((r) => r.hiddenBy[kind].hides).map((r) => r.check));
      expect(g.why, kind).toEqual(Object.fromEntries(CAPTURE_TABLE.map((r) => [r.check, decisionText(r.hiddenBy[kind])])));
    }
    // The status entry's reason names each gap kind too.
    const reason = JSON.stringify((manifestJsonSchema() as { properties: { checks: unknown } }).properties.checks);
    for (const kind of CAPTURE_GAP_REASONS) expect(reason).toContain(kind);
  });

  it('docs/checks.md holds the table as the registry says it (regenerate: node scripts/docs/capture-table-doc.ts)', async () => {
    const doc = await readFile(DOC, 'utf8');
    expect(doc.indexOf(START)).toBeGreaterThan(-1);
    expect(doc.indexOf(END)).toBeGreaterThan(doc.indexOf(START));
    expect(doc).toBe(withTable(doc));
    for (const row of CAPTURE_TABLE) for (const kind of CAPTURE_GAP_REASONS) expect(doc).toContain(row.hiddenBy[kind].why.replaceAll('|', '\\|'));
  });

  it('the table section changes when a row does: it is generated, not copied', () => {
    const doc = `a\n${START}\nstale\n${END}\nb`;
    expect(withTable(doc)).not.toBe(doc);
    expect(withTable(doc)).toContain(CAPTURE_TABLE[0]!.hiddenBy['tool-call-not-captured'].why);
    expect(() => withTable('no markers')).toThrow(/markers/);
  });
});
