import type { Trajectory } from '../assemble/trajectory.ts';
import type { ChecksConfig } from './config.ts';
import { firstLine } from './hit-text.ts';
import { compiledRules } from './rules.ts';
import { stepFailures, type StepFailure } from './step-failure.ts';

/**
 * A step whose failure is not its own: it repeats the failure of a step inside it. When an
 * exception escapes a span, instrumentations mark the enclosing spans failed too
 * (OpenTelemetry's `start_as_current_span` records the exception and sets status error at every
 * level it passes; smolagents wraps a tool's exception in `AgentToolExecutionError` on the
 * step's CHAIN span), so one failure shows on a whole chain of spans.
 */
export interface Propagation {
  /** Index (in `t.steps`) of the failed step inside this one whose failure this one repeats. */
  from: number;
  /** Index of the innermost step of the chain: where the failure happened. */
  origin: number;
}

/**
 * Which failures of a trajectory are propagations, by step index (`undefined`: the step did not
 * fail, or failed for its own reason). A failed step A repeats the failure of a failed step D
 * when all of these hold:
 * - D is inside A (a descendant by `parentId` within the trajectory) and no step between them
 *   failed: a failure climbs one failed span at a time, so A is compared with the nearest
 *   failures below it and reaches deeper ones through them;
 * - D ended no later than A (an exception leaves the inner span first);
 * - A's error says D's failure (`sameFailure`, against D's error, its origin's, or one of the
 *   next `MAX_CHAIN_READ` errors D itself repeats); or A has no error text at all, names no type
 *   or one of D's chain, and D was the last thing that happened inside A (no step inside A
 *   started at or after D ended): with no reason of its own given, A failed because D's
 *   failure escaped it.
 * Among several such D the one that ended last is taken (the failure that escaped last).
 *
 * Other checks read it to count a failure once: `links[i]?.origin ?? i` is where the failure
 * of step `i` happened. A step with a link still failed (a run ending in a propagated failure
 * did not succeed).
 */
export function failurePropagations(t: Trajectory, cfg: ChecksConfig): readonly (Propagation | undefined)[] {
  const failures = stepFailures(t, compiledRules(cfg));
  const minChars = cfg.options.passthroughMinChars;
  const known = memo.get(t);
  if (known !== undefined && known.failures === failures && known.minChars === minChars) return known.links;
  const links = computePropagations(t, failures, minChars);
  memo.set(t, { failures, minChars, links });
  return links;
}

const memo = new WeakMap<Trajectory, { failures: readonly (StepFailure | undefined)[]; minChars: number; links: readonly (Propagation | undefined)[] }>();

/**
 * Whether an outer step's error (which has text) states the inner step's failure:
 * - the same text (whole), when the types do not differ or the text is distinctive;
 * - the inner error's distinctive text appears in the outer's: its whole text, or its first
 *   line; distinctive means at least `minChars` long and not a bare traceback header;
 * - the inner error's type and first line appear as `Type: line` (full or unqualified type name,
 *   the way Python and JavaScript print an exception), however short the line;
 * each quoted whole (see `quotes`). Anything else, a short text merely contained or a text of
 * its own, is a different failure.
 */
export function sameFailure(outer: StepFailure, inner: StepFailure, minChars: number): boolean {
  if (outer.text === undefined || inner.text === undefined) return false;
  const o = outer.text.trim();
  const i = inner.text.trim();
  if (i === '') return false;
  if (o === i) return typesAgree(outer.type, inner.type) || distinctive(i, minChars);
  if (distinctive(i, minChars) && quotes(o, i, false)) return true;
  const line = firstLine(i);
  if (distinctive(line, minChars) && quotes(o, line, false)) return true;
  return typeNames(inner.type).some((name) => quotes(o, `${name}: ${line}`, true));
}

const WORD_CHAR = /[\p{L}\p{N}_]/u;

/**
 * Whether `text` holds `quote` as a whole: not inside a longer word at either end (`Error: x`
 * is not quoted by `Error: xyz`, `TimeoutError` not by `MyTimeoutError`). A short quote must
 * also end its sentence (`TimeoutError: timed out` is not quoted by `TimeoutError: timed out
 * after the retry`, a different message).
 */
function quotes(text: string, quote: string, short: boolean): boolean {
  for (let at = text.indexOf(quote); at >= 0; at = text.indexOf(quote, at + 1)) {
    const before = at === 0 ? '' : text[at - 1]!;
    const after = text[at + quote.length] ?? '';
    if (WORD_CHAR.test(before) || WORD_CHAR.test(after)) continue;
    if (short && after === ' ') continue;
    return true;
  }
  return false;
}

function computePropagations(t: Trajectory, failures: readonly (StepFailure | undefined)[], minChars: number): (Propagation | undefined)[] {
  const n = t.steps.length;
  const links = new Array<Propagation | undefined>(n).fill(undefined);
  let failed = 0;
  for (const f of failures) if (f !== undefined) failed++;
  if (failed < 2) return links; // the common case: nothing to fold

  const tree = stepTree(t);
  const byDepthDesc = tree.order.slice().reverse();

  // The nearest failed proper ancestor of each step (parents come first in `order`).
  const nearestFailed = new Array<number | undefined>(n).fill(undefined);
  for (const i of tree.order) {
    const p = tree.parent[i];
    if (p !== undefined) nearestFailed[i] = failures[p] !== undefined ? p : nearestFailed[p];
  }
  const below = new Map<number, number[]>();
  failures.forEach((f, d) => {
    const a = nearestFailed[d];
    if (f === undefined || a === undefined) return;
    const list = below.get(a);
    if (list === undefined) below.set(a, [d]);
    else list.push(d);
  });
  if (below.size === 0) return links;

  // The latest start of any step inside each step (children come before parents in reverse order).
  const latestInside = new Array<bigint | undefined>(n).fill(undefined);
  for (const i of byDepthDesc) {
    const p = tree.parent[i];
    if (p === undefined) continue;
    const mine = maxBig(t.steps[i]!.startTimeUnixNano, latestInside[i]);
    latestInside[p] = maxBig(mine, latestInside[p]);
  }

  // Deeper steps first, so a descendant's own propagation is known when its ancestor is read.
  for (const a of byDepthDesc) {
    const outer = failures[a];
    const inside = below.get(a);
    if (outer === undefined || inside === undefined) continue;
    const outerStep = t.steps[a]!;
    let chosen: number | undefined;
    for (const d of inside) {
      const innerStep = t.steps[d]!;
      if (innerStep.endTimeUnixNano > outerStep.endTimeUnixNano) continue;
      if (chosen !== undefined && t.steps[chosen]!.endTimeUnixNano > innerStep.endTimeUnixNano) continue;
      const repeats =
        outer.text === undefined
          ? outer.type === undefined || anyInChain(d, links, failures, (f) => f.type !== undefined && typesAgree(outer.type, f.type))
          : anyInChain(d, links, failures, (f) => sameFailure(outer, f, minChars));
      if (repeats) chosen = d;
    }
    // With no text of its own, A repeats D only if D's failure was the last thing inside A: only
    // the latest-ending candidate can be, and only it is read (one walk per step, not per child).
    if (chosen !== undefined && outer.text === undefined) {
      if (lastInside(a, chosen, tree, latestInside, t) >= t.steps[chosen]!.endTimeUnixNano) chosen = undefined;
    }
    if (chosen !== undefined) links[a] = { from: chosen, origin: links[chosen]?.origin ?? chosen };
  }
  return links;
}

/**
 * The latest start of a step inside `a` other than `d` and the steps inside `d`: the path from
 * `a` down to `d` and everything hanging off it. -1 when there is none.
 */
function lastInside(a: number, d: number, tree: StepTree, latestInside: readonly (bigint | undefined)[], t: Trajectory): bigint {
  let latest = -1n;
  let onPath = d;
  for (let p = tree.parent[d]; p !== undefined; onPath = p, p = tree.parent[p]) {
    for (const c of tree.children[p]!) {
      if (c === onPath) continue;
      latest = maxBig(t.steps[c]!.startTimeUnixNano, maxBig(latest, latestInside[c]));
    }
    if (p === a) break;
    latest = maxBig(t.steps[p]!.startTimeUnixNano, latest);
  }
  return latest;
}

/**
 * How many steps of a chain below its outermost are compared besides its origin. A wrapper
 * states the failure just inside it or the root cause; a bound keeps a deep chain of wrappers
 * that each quote neither from costing its depth at every level (quadratic in the tree).
 */
const MAX_CHAIN_READ = 64;

/**
 * Whether the failure of `start`, of its origin, or of one of the next steps its failure
 * repeats (up to `MAX_CHAIN_READ`) satisfies `test`, stopping at the first that does.
 */
function anyInChain(
  start: number,
  links: readonly (Propagation | undefined)[],
  failures: readonly (StepFailure | undefined)[],
  test: (failure: StepFailure) => boolean,
): boolean {
  if (test(failures[start]!)) return true;
  const origin = links[start]?.origin;
  if (origin === undefined) return false;
  if (test(failures[origin]!)) return true;
  let read = 0;
  for (let i = links[start]!.from; i !== origin && read < MAX_CHAIN_READ; i = links[i]!.from, read++) {
    if (test(failures[i]!)) return true;
  }
  return false;
}

interface StepTree {
  /** Parent index of each step within the trajectory, cycles broken. */
  parent: (number | undefined)[];
  /** Child indexes of each step, in trajectory order. */
  children: number[][];
  /** Step indexes, parents before children (by depth, then trajectory order). */
  order: number[];
}

/**
 * The parent relation over the trajectory's steps: `parentId` resolved to a step of the same
 * trace (the first copy of a repeated span id counts). A parent chain that loops back on itself
 * (malformed input) is cut where the loop is found.
 */
function stepTree(t: Trajectory): StepTree {
  const n = t.steps.length;
  const index = new Map<string, number>();
  t.steps.forEach((s, i) => {
    const key = `${s.traceId}/${s.id}`;
    if (!index.has(key)) index.set(key, i);
  });
  const parent = t.steps.map((s) => (s.parentId === undefined ? undefined : index.get(`${s.traceId}/${s.parentId}`)));
  const depth = new Array<number>(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const path: number[] = [];
    const onPath = new Set<number>();
    let j: number | undefined = i;
    while (j !== undefined && depth[j] === -1 && !onPath.has(j)) {
      onPath.add(j);
      path.push(j);
      j = parent[j];
    }
    let d: number;
    if (j === undefined) d = -1;
    else if (onPath.has(j)) {
      parent[path[path.length - 1]!] = undefined; // the loop closes here: cut it
      d = -1;
    } else d = depth[j]!;
    for (let k = path.length - 1; k >= 0; k--) depth[path[k]!] = ++d;
  }
  const order = [...Array(n).keys()].sort((x, y) => depth[x]! - depth[y]! || x - y);
  const children = t.steps.map((): number[] => []);
  parent.forEach((p, i) => {
    if (p !== undefined) children[p]!.push(i);
  });
  return { parent, children, order };
}

/** Types agree when either is absent or both name the same class (qualified or not). */
function typesAgree(a: string | undefined, b: string | undefined): boolean {
  return a === undefined || b === undefined || a === b || unqualified(a) === unqualified(b);
}

/** A type as printed in messages: the full name and, for `pkg.mod.Name`, `Name`. */
function typeNames(type: string | undefined): string[] {
  if (type === undefined) return [];
  const short = unqualified(type);
  return short === type ? [type] : [type, short];
}

function unqualified(type: string): string {
  const dot = type.lastIndexOf('.');
  return dot < 0 ? type : type.slice(dot + 1);
}

// The first line every Python traceback shares says nothing about which failure it is.
const TRACEBACK_HEADER = /^traceback \(most recent call last\):?$/i;

function distinctive(text: string, minChars: number): boolean {
  return text.length >= minChars && !TRACEBACK_HEADER.test(text);
}

function maxBig(a: bigint, b: bigint | undefined): bigint {
  return b === undefined || a > b ? a : b;
}
