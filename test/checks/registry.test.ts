import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CAPTURE_GAP_REASONS } from '../../src/assemble/capture-gaps.ts';
import type { L0CheckDefinition } from '../../src/checks/l0-check.ts';
import { indexChecks, L0_CHECKS, L0_PATTERNS } from '../../src/checks/registry.ts';
import { TrajwatchError } from '../../src/errors.ts';

const CHECKS_DIR = fileURLToPath(new URL('../../src/checks/', import.meta.url));

const isDefinition = (value: unknown): value is L0CheckDefinition =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as L0CheckDefinition).pattern === 'string' &&
  typeof (value as L0CheckDefinition).run === 'function' &&
  typeof (value as L0CheckDefinition).claim === 'function';

/** Every L0 check definition exported by a file of `src/checks/`, with the file it came from. */
async function exportedDefinitions(): Promise<{ file: string; definition: L0CheckDefinition }[]> {
  const out: { file: string; definition: L0CheckDefinition }[] = [];
  for (const file of readdirSync(CHECKS_DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    const mod = (await import(`${CHECKS_DIR}${file}`)) as Record<string, unknown>;
    for (const value of Object.values(mod)) if (isDefinition(value) && !out.some((o) => o.definition === value)) out.push({ file, definition: value });
  }
  return out;
}

/** What is wrong between the definitions the files export and the registry's list. */
function registrationProblems(found: readonly { file: string; definition: L0CheckDefinition }[], registered: readonly L0CheckDefinition[]): string[] {
  const problems: string[] = [];
  for (const { file, definition } of found) {
    const times = registered.filter((r) => r === definition).length;
    if (times === 0) problems.push(`${file}: "${definition.pattern}" is not registered in registry.ts`);
    if (times > 1) problems.push(`${file}: "${definition.pattern}" is registered ${times} times`);
    if (file !== `${definition.pattern}.ts`) problems.push(`${file}: "${definition.pattern}" should live in ${definition.pattern}.ts`);
  }
  for (const r of registered) if (!found.some((f) => f.definition === r)) problems.push(`"${r.pattern}" is registered but no file of src/checks/ exports it`);
  return problems;
}

const fakeRow = Object.fromEntries(CAPTURE_GAP_REASONS.map((k) => [k, { hides: true, why: '-' }])) as L0CheckDefinition['hiddenBy'];

const fake = (pattern: string): L0CheckDefinition => ({
  pattern,
  run: () => [],
  severity: 'low',
  claim: (a) => a,
  absence: 'none',
  silentOnIncomplete: '-',
  hiddenBy: fakeRow,
});

describe('the L0 check registry', () => {
  it('lists every check definition exported from src/checks/ exactly once, each in the file named after its pattern', async () => {
    const found = await exportedDefinitions();
    expect(found.map((f) => f.definition.pattern).sort()).toEqual([...L0_PATTERNS].sort());
    expect(registrationProblems(found, L0_CHECKS)).toEqual([]);
  });

  it('catches a check file left out of the registry, and one registered twice', () => {
    const a = fake('a');
    const b = fake('b');
    expect(
      registrationProblems(
        [
          { file: 'a.ts', definition: a },
          { file: 'b.ts', definition: b },
        ],
        [a],
      ),
    ).toEqual(['b.ts: "b" is not registered in registry.ts']);
    expect(registrationProblems([{ file: 'a.ts', definition: a }], [a, a])).toEqual(['a.ts: "a" is registered 2 times']);
  });

  it('refuses a pattern registered twice, even by two different definitions, and an empty registry', () => {
    expect(() => indexChecks([fake('a'), fake('b'), fake('a')])).toThrow(/L0 check "a" registered twice/);
    expect(() => indexChecks([])).toThrow(TrajwatchError);
  });

  it('keeps the order findings and manifests were built in (appending is the only safe change)', () => {
    expect(L0_PATTERNS).toEqual(['error-output', 'fault-passthrough', 'malformed-structure', 'unguarded-send', 'out-of-order-gate']);
  });
});
