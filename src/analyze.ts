import type { Trajectory } from './assemble/trajectory.ts';
import type { CheckResults } from './checks/check-result.ts';
import { runChecks } from './checks/run-checks.ts';
import type { Config } from './config-schema.ts';
import { findingsFromChecks } from './findings/from-checks.ts';
import { deriveProvenance, provenanceAsOf, type DerivedProvenance } from './findings/provenance/derive.ts';
import type { ProvenanceIssue } from './findings/provenance/issue.ts';
import type { Finding } from './findings/schema.ts';

/** The inline analysis of one closed trajectory. */
export interface Analysis {
  checks: CheckResults;
  findings: Finding[];
  /** The findings' provenance with its refused inputs; absent when there was no finding to carry it. */
  provenance?: DerivedProvenance;
}

/**
 * The inline analysis of one closed trajectory: L0 checks and exact tool repetition, turned
 * into findings with their treatment and conditions provenance. Pure apart from reporting
 * refused provenance inputs to `onProvenanceIssue`.
 */
export function createAnalyzer(
  config: Pick<Config, 'checks' | 'provenance'>,
  onProvenanceIssue: (issue: ProvenanceIssue, t: Trajectory) => void = () => {},
): (t: Trajectory) => Analysis {
  return (t) => {
    const checks = runChecks(t, config.checks);
    if (checks.l0.length === 0 && checks.repetition.status !== 'observed') return { checks, findings: [] };
    const provenance = deriveProvenance(t, config.provenance);
    for (const issue of provenance.issues) onProvenanceIssue(issue, t);
    // Each finding carries the provenance in effect when its claim was first observed; the
    // whole trajectory's (and its refused inputs) is what the manifest reports.
    return { checks, findings: findingsFromChecks(t, checks, provenanceAsOf(t, config.provenance, provenance)), provenance };
  };
}
