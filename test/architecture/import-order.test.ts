import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type Allowance, checkImportOrder, LAYERS, readImports, readTree } from './import-order.ts';

/**
 * Back edges other branches of issue 15 remove; delete an entry when its branch merges (a
 * stale entry fails the test, so the list can only shrink).
 */
const KNOWN_BACK_EDGES: readonly Allowance[] = [];

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

describe('the import order of src/ (docs/architecture.md)', () => {
  it('has no import pointing up the declared order, no unit outside it, and no cycle', () => {
    const violations = checkImportOrder(readImports(readTree(SRC)), LAYERS, KNOWN_BACK_EDGES);
    expect(violations.map((v) => `${v.rule}: ${v.message}`)).toEqual([]);
  });

  it('sees imports of every form: named, type-only, re-export and dynamic', () => {
    const edges = readImports(
      new Map([
        [
          'sinks/a.ts',
          [
            "import { x } from '../core/x.ts';",
            "import type { Y } from './y.ts';",
            "export * from '../findings/z.ts';",
            "const m = await import('../judge/m.ts');",
            "import { z } from 'zod';",
          ].join('\n'),
        ],
      ]),
    );
    expect(edges.map((e) => [e.to, e.line])).toEqual([
      ['core/x.ts', 1],
      ['sinks/y.ts', 2],
      ['findings/z.ts', 3],
      ['judge/m.ts', 4],
    ]);
  });
});

describe('checkImportOrder on a small tree', () => {
  const layers = ['core/', 'ingest/', 'sinks/', 'pipeline.ts'];

  it('accepts imports that point down or stay within a unit', () => {
    const tree = new Map([
      ['core/digest.ts', ''],
      ['ingest/a.ts', "import { d } from '../core/digest.ts';\nimport { b } from './b.ts';"],
      ['ingest/b.ts', ''],
      ['pipeline.ts', "import { a } from './ingest/a.ts';\nimport type { S } from './sinks/sink.ts';"],
      ['sinks/sink.ts', "import { a } from '../ingest/a.ts';"],
    ]);
    expect(checkImportOrder(readImports(tree), layers)).toEqual([]);
  });

  it('fails on a back import, naming the file, its line, the import and the rule', () => {
    const tree = new Map([
      ['ingest/source.ts', "import { z } from 'zod';\nimport { retry } from '../sinks/retry.ts';"],
      ['sinks/retry.ts', ''],
    ]);
    expect(checkImportOrder(readImports(tree), layers)).toEqual([
      {
        rule: 'upward',
        message: "src/ingest/source.ts:2 imports '../sinks/retry.ts': ingest/ may not import from sinks/, which sits above it",
      },
    ]);
  });

  it('fails on a type-only back import too: types couple the layers as much as values', () => {
    const tree = new Map([['core/x.ts', "import type { Span } from '../ingest/span.ts';"]]);
    expect(checkImportOrder(readImports(tree), layers).map((v) => v.rule)).toEqual(['upward']);
  });

  it('fails on a unit missing from the order, so a new folder must be placed', () => {
    const tree = new Map([['extras/thing.ts', "import { d } from '../core/digest.ts';"]]);
    expect(checkImportOrder(readImports(tree), layers)).toEqual([
      { rule: 'unplaced', message: 'src/extras/thing.ts: its unit "extras/" is not in LAYERS; add it where it belongs' },
    ]);
  });

  it('fails on a cycle between two files of one unit', () => {
    const tree = new Map([
      ['sinks/a.ts', "import { b } from './b.ts';"],
      ['sinks/b.ts', "import { a } from './a.ts';"],
    ]);
    expect(checkImportOrder(readImports(tree), layers)).toEqual([{ rule: 'file-cycle', message: 'files in one import cycle: src/sinks/a.ts, src/sinks/b.ts' }]);
  });

  it('fails on a cycle between units, reported beside the back import that closes it', () => {
    const tree = new Map([
      ['ingest/a.ts', "import { s } from '../sinks/s.ts';"],
      ['sinks/s.ts', "import { a } from '../ingest/a.ts';"],
    ]);
    expect(checkImportOrder(readImports(tree), layers).map((v) => v.rule)).toEqual(['upward', 'folder-cycle', 'file-cycle']);
  });

  it('passes an allowed back edge, and fails once the allowance matches no import', () => {
    const allowed = [{ from: 'ingest/a.ts', to: 'sinks/s.ts', awaits: 'a test' }];
    const withEdge = new Map([
      ['ingest/a.ts', "import { s } from '../sinks/s.ts';"],
      ['sinks/s.ts', ''],
    ]);
    expect(checkImportOrder(readImports(withEdge), layers, allowed)).toEqual([]);
    const fixed = new Map([
      ['ingest/a.ts', ''],
      ['sinks/s.ts', ''],
    ]);
    expect(checkImportOrder(readImports(fixed), layers, allowed)).toEqual([
      { rule: 'stale-allowance', message: 'allowance src/ingest/a.ts → src/sinks/s.ts matches no import any more; delete it' },
    ]);
  });
});
