/**
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function and per
 * file, the top entries, so a profile can be read in a terminal and quoted in a doc.
 *
 * Run: node bench/profile-summary.ts <file.cpuprofile> [top] [--after <function>]
 * Prints self time by function and by file, then inclusive time by function. `--after`: only
 * the samples from the first one with `<function>` on its stack on (e.g. `handle`, serve's
 * request handler, leaves start-up out), and never the idle ones, so shares are of busy time.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  name: string;
  share: number;
}

function shortUrl(url: string): string {
  const at = url.lastIndexOf('/src/');
  if (at >= 0) return url.slice(at + 1);
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm);
  return url.replace(/^.*\//, '') || '(native)';
}

const frameKey = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${shortUrl(url)}${url ? `:${lineNumber + 1}` : ''}`;
};

/** Inclusive shares by function: a sample counts once for every distinct function on its stack. */
export function inclusiveShares(profile: Profile): SelfTime[] {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const nodeById = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let total = 0;
  for (const [i, id] of profile.samples.entries()) {
    const dt = profile.timeDeltas[i] ?? 0;
    total += dt;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const key = frameKey(nodeById.get(at)!);
      if (seen.has(key)) continue;
      seen.add(key);
      totals.set(key, (totals.get(key) ?? 0) + dt);
    }
  }
  return [...totals].map(([name, t]) => ({ name, share: t / total })).sort((a, b) => b.share - a.share);
}

/** Self-time shares by function (`name file:line`) and by file, largest first. */
export function summarizeProfile(profile: Profile): { byFunction: SelfTime[]; byFile: SelfTime[] } {
  const nodeById = new Map(profile.nodes.map((n) => [n.id, n]));
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  let total = 0;
  for (const [i, id] of profile.samples.entries()) {
    const dt = profile.timeDeltas[i] ?? 0;
    const node = nodeById.get(id);
    if (node === undefined) continue;
    const where = shortUrl(node.callFrame.url);
    const key = frameKey(node);
    fn.set(key, (fn.get(key) ?? 0) + dt);
    file.set(where, (file.get(where) ?? 0) + dt);
    total += dt;
  }
  const ranked = (m: Map<string, number>) => [...m].map(([name, t]) => ({ name, share: t / total })).sort((a, b) => b.share - a.share);
  return { byFunction: ranked(fn), byFile: ranked(file) };
}

/** `profile` with the samples before the first one with `functionName` on its stack, and the idle ones, weighed zero. */
export function busyAfter(profile: Profile, functionName: string): Profile {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const nodeById = new Map(profile.nodes.map((n) => [n.id, n]));
  const onStack = (id: number) => {
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (nodeById.get(at)!.callFrame.functionName === functionName) return true;
    return false;
  };
  const first = profile.samples.findIndex(onStack);
  const timeDeltas = profile.timeDeltas.map((dt, i) =>
    i < first || first < 0 || nodeById.get(profile.samples[i]!)!.callFrame.functionName === '(idle)' ? 0 : dt,
  );
  return { ...profile, timeDeltas };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const top = Number(process.argv[3] ?? 25);
  const after = process.argv.indexOf('--after');
  const raw = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Profile;
  const profile = after > 0 ? busyAfter(raw, process.argv[after + 1]!) : raw;
  const { byFunction, byFile } = summarizeProfile(profile);
  const pct = (s: number) => `${(s * 100).toFixed(1).padStart(5)}%`;
  console.log('self time by function');
  for (const e of byFunction.slice(0, top)) console.log(`${pct(e.share)}  ${e.name}`);
  console.log('\nself time by file');
  for (const e of byFile.slice(0, top)) console.log(`${pct(e.share)}  ${e.name}`);
  console.log('\ninclusive time by function');
  for (const e of inclusiveShares(profile).slice(0, top)) console.log(`${pct(e.share)}  ${e.name}`);
}
