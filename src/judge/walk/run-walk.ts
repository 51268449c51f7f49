import type { Trajectory } from '../../assemble/trajectory.ts';
import type { CheckResults } from '../../checks/check-result.ts';
import type { ChecksConfig } from '../../checks/config.ts';
import { toolRoles } from '../../checks/tool-roles.ts';
import type { Provenance } from '../../findings/provenance/provenance.ts';
import type { Finding } from '../../findings/schema.ts';
import type { JudgeConfig } from '../config.ts';
import type { FaultReporter } from '../fault.ts';
import type { LayerPoints } from './layer-points.ts';
import { TrajectoryLayerReader, type AskParts } from './layer-reader.ts';
import { walk } from './walk.ts';
import { walkFindings } from './walk-findings.ts';

/** What one trajectory's walk borrows from `DecisionPoints`: the reader's parts, and where findings and faults go. */
export interface WalkRun extends AskParts {
  queue: AskParts['queue'] & { track(p: Promise<void>): void };
  checksCfg: ChecksConfig;
  walk: JudgeConfig['walk'];
  onFindings: (findings: Finding[], alarms: Finding[]) => void;
  faults: FaultReporter;
}

/**
 * The layered walk of one sampled trajectory: its findings go out like the windows', what it
 * did is counted in `run.stats`. Tracked in the call queue, so `drain` waits for it. Never
 * rejects: a failure is a `judge` fault.
 */
export function runWalk(points: LayerPoints, t: Trajectory, checks: CheckResults, provenance: Provenance, run: WalkRun): Promise<void> {
  const stats = run.stats;
  stats.walks++;
  const { policy, policyDigest, ledger, budget, stopping, queue } = run;
  const reader = new TrajectoryLayerReader(t, { policy, policyDigest, ledger, budget, stats, stopping, queue }, points);
  const roles = toolRoles(t, run.checksCfg);
  const p = walk(
    { t, checks, roles, checksCfg: run.checksCfg, stopEarly: run.walk.stopEarly, maxWindowsPerLayer: run.walk.maxWindowsPerLayer, policyDigest },
    reader,
  ).then((outcome) => {
    if (outcome.earlyExit !== null) stats.earlyExits++;
    stats.conflicts += outcome.conflicts.length;
    stats.downgrades += outcome.sites.filter((s) => s.result.answers[0]?.recommendation.action === 'act' && s.recommendation.action !== 'act').length;
    const { findings, alarms } = walkFindings(t, outcome, provenance);
    stats.findings += findings.length;
    stats.alarms += alarms.length;
    run.onFindings(findings, alarms);
  });
  const settled = p.then(
    () => undefined,
    (err: unknown) => run.faults.report('judge', err),
  );
  queue.track(settled);
  return settled;
}
