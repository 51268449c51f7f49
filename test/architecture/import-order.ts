import { readdirSync, readFileSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import ts from 'typescript';

/**
 * The declared order of `src/`, bottom first: a file may import from its own unit or from a
 * unit listed before its own, never from one listed after it. A unit is a top-level folder
 * (`'ingest/'`, subfolders included) or a top-level file (`'analyze.ts'`). The reasons for each
 * place are in docs/architecture.md ("Import order"); keep the two in step.
 */
export const LAYERS: readonly string[] = [
  'errors.ts',
  'core/',
  'config/',
  'telemetry/',
  'storage/',
  'kafka/',
  'ingest/',
  'normalize/',
  'assemble/',
  // The repartition between the two assembly stages (sessions at any scale): encodes steps and
  // trajectories (assemble/, normalize/) and produces with the Kafka client (kafka/); the
  // pipeline and the topology above use it.
  'repartition/',
  'checks/',
  'windows/',
  'findings/',
  'judge/',
  // The offline tools over the judge's ledger and labels (calibrate, reliability, the label
  // server): they read judge/'s records and certificates; nothing online imports them.
  'calibration/',
  'sinks/',
  'config-schema.ts',
  'analyze.ts',
  // The pipeline (its core, position ledger, outputs, stage-1 forwarding and series): connects
  // every stage below it; the topology above builds it.
  'pipeline/',
  'topology/',
  // The invariant checker over a deployment's output (`trajwatch verify`): reads what every
  // stage writes, beside the commands; only cli/ imports it.
  'verify/',
  'cli/',
];

/** One `import`/`export … from`/`import()` between two files under `src/`, paths relative to `src/`. */
export interface ImportEdge {
  from: string;
  to: string;
  specifier: string;
  line: number;
}

export interface Violation {
  rule: 'upward' | 'unplaced' | 'folder-cycle' | 'file-cycle' | 'stale-allowance';
  message: string;
}

/** A known back edge kept until the branch that removes it merges; `awaits` names that work. */
export interface Allowance {
  from: string;
  to: string;
  awaits: string;
}

/** Every relative import of every file in `files` (path relative to `src/` → source text). */
export function readImports(files: ReadonlyMap<string, string>): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const [from, text] of files) {
    const info = ts.preProcessFile(text, true, true);
    for (const ref of info.importedFiles) {
      if (!ref.fileName.startsWith('.')) continue;
      const to = posix.normalize(posix.join(posix.dirname(from), ref.fileName));
      const line = lineAt(text, ref.pos);
      edges.push({ from, to, specifier: ref.fileName, line });
    }
  }
  return edges;
}

function lineAt(text: string, pos: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** The unit a path belongs to: `'ingest/'` for `ingest/auth.ts`, `'analyze.ts'` for itself. */
export function unitOf(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(0, slash + 1);
}

/**
 * Every import against `layers`, every unit missing from it, and every cycle between units or
 * between files; `allowed` edges are neither reported nor counted in cycles, and an allowance
 * that matches no import is itself reported so the list only shrinks.
 */
export function checkImportOrder(edges: readonly ImportEdge[], layers: readonly string[], allowed: readonly Allowance[] = []): Violation[] {
  const rank = new Map(layers.map((unit, i) => [unit, i]));
  const isAllowed = (e: ImportEdge): boolean => allowed.some((a) => a.from === e.from && a.to === e.to);
  const kept = edges.filter((e) => !isAllowed(e));
  const violations: Violation[] = [];
  const unplaced = new Set<string>();
  for (const e of kept) {
    for (const path of [e.from, e.to]) {
      const unit = unitOf(path);
      if (!rank.has(unit) && !unplaced.has(unit)) {
        unplaced.add(unit);
        violations.push({ rule: 'unplaced', message: `src/${path}: its unit "${unit}" is not in LAYERS; add it where it belongs` });
      }
    }
    const a = rank.get(unitOf(e.from));
    const b = rank.get(unitOf(e.to));
    if (a !== undefined && b !== undefined && b > a) {
      violations.push({
        rule: 'upward',
        message: `src/${e.from}:${e.line} imports '${e.specifier}': ${unitOf(e.from)} may not import from ${unitOf(e.to)}, which sits above it`,
      });
    }
  }
  for (const cycle of cycles(kept.map((e) => [unitOf(e.from), unitOf(e.to)] as const))) {
    violations.push({ rule: 'folder-cycle', message: `units in one import cycle: ${cycle.join(', ')}` });
  }
  for (const cycle of cycles(kept.map((e) => [e.from, e.to] as const))) {
    violations.push({ rule: 'file-cycle', message: `files in one import cycle: ${cycle.map((f) => `src/${f}`).join(', ')}` });
  }
  for (const a of allowed) {
    if (!edges.some((e) => e.from === a.from && e.to === a.to)) {
      violations.push({ rule: 'stale-allowance', message: `allowance src/${a.from} → src/${a.to} matches no import any more; delete it` });
    }
  }
  return violations;
}

/** The strongly connected components with more than one node (Tarjan), each in sorted order. */
function cycles(pairs: readonly (readonly [string, string])[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const [a, b] of pairs) {
    if (a === b) continue;
    if (!next.has(a)) next.set(a, new Set());
    next.get(a)!.add(b);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return found;
}

/** Every `.ts` file under `root`, keyed by its path relative to `root` with `/` separators. */
export function readTree(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) files.set(relative(root, path).split(sep).join('/'), readFileSync(path, 'utf8'));
    }
  };
  walk(root);
  return files;
}
