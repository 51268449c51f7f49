import type { AttrValue } from '../ingest/span.ts';
import type { Step } from '../normalize/step.ts';

/**
 * How far a child may stand outside its parent's interval before the difference is read as
 * clock skew rather than timestamp rounding: 1 ms. Exporters round to microseconds at worst,
 * and hosts kept by NTP agree to a few milliseconds, so a smaller skew is within what a
 * capture can be trusted to order anyway, and a larger one is a clock, not the agent.
 */
export const CLOCK_SKEW_TOLERANCE_NS = 1_000_000n;

/** One span whose timestamps contradict the span tree. */
export interface ClockSkew {
  spanId: string;
  traceId: string;
  parentId: string;
  /**
   * What must be added to the span's (and its same-clock descendants') times to put it inside
   * its parent: positive when the span's clock is behind its parent's, negative when ahead.
   */
  offsetNs: bigint;
  /** The span and its parent came from different emitters (service, instance or host). */
  crossEmitter: boolean;
}

/** What a trajectory's timestamps say against its span tree. */
export interface ClockReading {
  skews: ClockSkew[];
  /** Per step index: the shift that puts the step where the tree says (0n without skew). */
  shiftNs: bigint[];
  /** Per step index: its depth in the span tree (0 for a root or a step whose parent is absent). */
  depth: number[];
}

/** The resource attributes that name which clock stamped a span. */
const CLOCK_KEYS = ['host.id', 'host.name', 'service.instance.id', 'service.name', 'k8s.pod.uid'] as const;

const memo = new WeakMap<readonly Step[], ClockReading>();

/**
 * Clock skew in a trajectory, read against the span tree. A child cannot start before its
 * parent started: that is skew whoever emitted the two. A child from another emitter (another
 * service, instance or host, so another clock) that ends after its parent ended, or starts
 * after it ended, is skew too; from the same emitter that is an asynchronous child (one clock
 * cannot disagree with itself), so it is not. Beyond `CLOCK_SKEW_TOLERANCE_NS` only.
 *
 * Each skewed span's shift carries to the descendants stamped by the same clock, and to later
 * spans of that emitter whose own parent says nothing; so the tree order (`treeOrdered`) puts a
 * host's spans where its parent's clock says they ran. Pure; memoized per steps array.
 */
export function readClocks(steps: readonly Step[]): ClockReading {
  const known = memo.get(steps);
  if (known !== undefined) return known;
  const reading = computeReading(steps);
  memo.set(steps, reading);
  return reading;
}

function computeReading(steps: readonly Step[]): ClockReading {
  const shiftNs: bigint[] = steps.map(() => 0n);
  const depth: number[] = steps.map(() => 0);
  const skews: ClockSkew[] = [];
  const index = new Map<string, number>();
  steps.forEach((s, i) => index.set(`${s.traceId}/${s.id}`, i));
  const parentOf = (i: number): number | undefined => {
    const s = steps[i]!;
    return s.parentId === undefined ? undefined : index.get(`${s.traceId}/${s.parentId}`);
  };
  // Parents before children, whatever the timestamps say: depth first from each root.
  const children = new Map<number, number[]>();
  const roots: number[] = [];
  steps.forEach((_, i) => {
    const p = parentOf(i);
    if (p === undefined || p === i) roots.push(i);
    else if (children.has(p)) children.get(p)!.push(i);
    else children.set(p, [i]);
  });
  const clocks = steps.map(clockOf);
  const emitterShift = new Map<string, bigint>();
  const visited = new Uint8Array(steps.length);
  const stack = [...roots].reverse();
  while (stack.length > 0) {
    const i = stack.pop()!;
    if (visited[i] === 1) continue;
    visited[i] = 1;
    const p = parentOf(i);
    if (p !== undefined && p !== i && visited[p] === 1) {
      const s = steps[i]!;
      const parent = steps[p]!;
      const cross = clocks[i] !== clocks[p];
      const inherited = cross ? (emitterShift.get(clocks[i]!) ?? 0n) : shiftNs[p]!;
      const pStart = parent.startTimeUnixNano + shiftNs[p]!;
      const pEnd = parent.endTimeUnixNano + shiftNs[p]!;
      let shift = inherited;
      if (s.startTimeUnixNano + shift < pStart - CLOCK_SKEW_TOLERANCE_NS) {
        shift = pStart - s.startTimeUnixNano;
      } else if (cross && (s.endTimeUnixNano + shift > pEnd + CLOCK_SKEW_TOLERANCE_NS || s.startTimeUnixNano + shift > pEnd + CLOCK_SKEW_TOLERANCE_NS)) {
        // Ahead of its parent's clock: end with the parent, yet not before it started.
        shift = pEnd - s.endTimeUnixNano;
        if (s.startTimeUnixNano + shift < pStart) shift = pStart - s.startTimeUnixNano;
      }
      if (shift !== inherited) {
        skews.push({ spanId: s.id, traceId: s.traceId, parentId: parent.id, offsetNs: shift - inherited, crossEmitter: cross });
      }
      shiftNs[i] = shift;
      depth[i] = depth[p]! + 1;
      if (cross && shift !== 0n && !emitterShift.has(clocks[i]!)) emitterShift.set(clocks[i]!, shift);
    }
    const kids = children.get(i);
    if (kids !== undefined) for (let k = kids.length - 1; k >= 0; k--) stack.push(kids[k]!);
  }
  return { skews, shiftNs, depth };
}

function clockOf(step: Step): string {
  const parts: string[] = [];
  for (const key of CLOCK_KEYS) {
    const v: AttrValue | undefined = step.resource[key];
    if (typeof v === 'string' && v !== '') parts.push(`${key}=${v}`);
  }
  return parts.join('\u0000');
}

/**
 * The steps in the order their span tree and their clocks agree on: by start time corrected
 * by each step's shift (`readClocks`), a parent before the children that start with it, then
 * by corrected end time and as `compare` orders them. The same array when no skew was read,
 * so trajectories without skew are untouched.
 */
export function treeOrdered(steps: Step[], compare: (a: Step, b: Step) => number): Step[] {
  const { skews, shiftNs, depth } = readClocks(steps);
  if (skews.length === 0) return steps;
  const order = steps.map((_, i) => i);
  const start = (i: number) => steps[i]!.startTimeUnixNano + shiftNs[i]!;
  const end = (i: number) => steps[i]!.endTimeUnixNano + shiftNs[i]!;
  order.sort((a, b) => {
    if (start(a) !== start(b)) return start(a) < start(b) ? -1 : 1;
    if (depth[a] !== depth[b]) return depth[a]! - depth[b]!;
    if (end(a) !== end(b)) return end(a) < end(b) ? -1 : 1;
    return compare(steps[a]!, steps[b]!);
  });
  return order.map((i) => steps[i]!);
}
