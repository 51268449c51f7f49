/** The generated framework table in docs/clients.md: short cells, every difference in full below. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { END, renderMatrix, START } from '../../scripts/docs/framework-matrix-doc.ts';

const yes = { status: 'yes', detail: 'fine' };
const row = (id: string, cells: Record<string, { status: string; detail: string }>) => ({
  id,
  title: id.toUpperCase(),
  instrumentation: 'inst',
  versions: { pkg: '1.0' },
  cells: { session: yes, toolNames: yes, args: yes, repetition: yes, failure: yes, falseFindings: yes, ...cells },
});

describe('the framework matrix section', () => {
  it('numbers each cell that is not yes and states its detail in full, pipes and all', () => {
    const long = `[malformed-structure@tool:x] ${'a'.repeat(400)} | second`;
    const md = renderMatrix([
      row('a', {}),
      row('b', { args: { status: 'no', detail: long }, repetition: { status: 'n/a', detail: 'the tools make no spans' } }),
    ]);
    expect(md).toContain('| A | inst | pkg 1.0 | yes | yes | yes | yes | yes | yes |');
    expect(md).toContain('| B | inst | pkg 1.0 | yes | yes | **no** [1] | n/a [2] | yes | yes |');
    expect(md).toContain(`1. B, no: ${long}`);
    expect(md).toContain('2. B, n/a: the tools make no spans');
  });

  it('has its markers in docs/clients.md', async () => {
    const doc = await readFile(new URL('../../docs/clients.md', import.meta.url), 'utf8');
    expect(doc.indexOf(START)).toBeGreaterThan(-1);
    expect(doc.indexOf(END)).toBeGreaterThan(doc.indexOf(START));
  });
});
