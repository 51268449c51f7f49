import type { Trajectory } from './assemble/trajectory.ts';
import { runChecks } from './checks/run-checks.ts';
import type { Config } from './config/schema.ts';
import { findingsFromChecks } from './findings/from-checks.ts';
import { deriveProvenance } from './findings/provenance/derive.ts';
import type { ProvenanceIssue } from './findings/provenance/issue.ts';
import type { Finding } from './findings/schema.ts';

/**
 * The inline analysis of one closed trajectory: L0 checks and exact tool repetition, turned
 * into findings with their treatment and conditions provenance. Pure apart from reporting
 * refused provenance inputs to `onProvenanceIssue`.
 */
export function createAnalyzer(
  config: Pick<Config, 'checks' | 'provenance'>,
  onProvenanceIssue: (issue: ProvenanceIssue, t: Trajectory) => void = () => {},
): (t: Trajectory) => Finding[] {
  return (t) => {
    const results = runChecks(t, config.checks);
    if (results.l0.length === 0 && results.repetition.status !== 'observed') return [];
    const provenance = deriveProvenance(t, config.provenance);
    for (const issue of provenance.issues) onProvenanceIssue(issue, t);
    return findingsFromChecks(t, results, provenance);
  };
}
