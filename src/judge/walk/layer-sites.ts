import type { Trajectory } from '../../assemble/trajectory.ts';
import type { CheckResults } from '../../checks/check-result.ts';
import type { L0Pattern } from '../../checks/registry.ts';
import type { ToolRoles } from '../../checks/tool-roles.ts';
import type { WalkLayer } from '../../findings/schema.ts';
import { terminalIndex } from '../../windows/extract.ts';
import type { WindowKind, WindowTrigger } from '../../windows/window.ts';

/** Which layer settles a fired L0 pattern: the candidate a layer verdict can confirm or contradict. */
export const PATTERN_LAYER: Readonly<Record<L0Pattern, Exclude<WalkLayer, 'L0' | 'L1'>>> = {
  'error-output': 'L3',
  'fault-passthrough': 'L3',
  'malformed-structure': 'L3',
  'unguarded-send': 'L4',
  'out-of-order-gate': 'L2',
};

/**
 * One place a layer reads: an anchor step and the window kinds that fit the layer there, widest
 * first. The first that builds within the extraction caps is judged; the ones before it are
 * named as refused with their cap. Nothing is truncated to fit.
 */
export interface LayerSite {
  anchorIndex: number;
  kinds: readonly WindowKind[];
  trigger: WindowTrigger;
}

/** What a layer reads on `t`: its sites, and the ones beyond `maxWindowsPerLayer` it does not read. */
export interface LayerSites {
  sites: LayerSite[];
  notRead: LayerSite[];
  /** Why there is nothing to read, when `sites` is empty. */
  none?: string;
}

/**
 * The sites of each judged layer. Pure.
 * - L1: the terminal turn (the turn window at the step that ended last; its event window when the
 *   turn is over the caps).
 * - L2: the trajectory read from the end within the caps: the agent subtree, else the terminal
 *   turn, else the event window at the terminal step.
 * - L3: event windows at tool outputs and at every step an L0 pattern of L3 fired on — those
 *   first, then failed tools, then the rest from the end.
 * - L4: windows at outbound sends with the history before them (the send's turn, else its event
 *   window) — first unguarded sends, then the rest from the end.
 */
export function layerSites(layer: Exclude<WalkLayer, 'L0'>, t: Trajectory, checks: CheckResults, roles: ToolRoles, maxWindowsPerLayer: number): LayerSites {
  const terminal = terminalIndex(t);
  if (layer === 'L1' || layer === 'L2') {
    if (terminal < 0) return { sites: [], notRead: [], none: 'no-terminal-step' };
    const kinds: WindowKind[] = layer === 'L1' ? ['turn', 'event'] : ['agent', 'turn', 'event'];
    return { sites: [{ anchorIndex: terminal, kinds, trigger: 'terminal' }], notRead: [] };
  }
  // A fired candidate of this layer is read wherever it is anchored (an error on a chain step
  // too): the layer that settles a pattern must see it.
  const hitAt = new Set(
    checks.l0
      .filter((h) => PATTERN_LAYER[h.pattern] === layer)
      .map((h) => t.steps.findIndex((s) => s.id === h.anchor && h.evidence.some((e) => e.spanId === s.id && e.traceId === s.traceId)))
      .filter((i) => i >= 0),
  );
  const own = layer === 'L3' ? t.steps.flatMap((s, i) => (s.kind === 'tool' ? [i] : [])) : [...roles.outbound];
  const candidates = [...new Set([...hitAt, ...own])];
  if (candidates.length === 0) return { sites: [], notRead: [], none: layer === 'L3' ? 'no-tool-outputs' : 'no-outbound-sends' };
  const rank = (i: number) => (hitAt.has(i) ? 0 : layer === 'L3' && roles.failed[i] === true ? 1 : 2);
  // From the end within each rank: the latest outputs are nearest the outcome.
  const ordered = [...candidates].sort((a, b) => rank(a) - rank(b) || b - a);
  const kinds: WindowKind[] = layer === 'L3' ? ['event'] : ['turn', 'event'];
  const trigger: WindowTrigger = layer === 'L4' ? 'outbound' : 'sampled';
  const all = ordered.map((anchorIndex) => ({ anchorIndex, kinds, trigger: hitAt.has(anchorIndex) ? ('l0-hit' as const) : trigger }));
  return { sites: all.slice(0, maxWindowsPerLayer), notRead: all.slice(maxWindowsPerLayer) };
}
