import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckResults } from '../checks/check-result.ts';
import { NO_PROVENANCE, type Provenance } from '../findings/provenance/provenance.ts';
import type { Finding } from '../findings/schema.ts';
import type { TraceWindow } from '../windows/window.ts';
import type { FaultReporter } from './fault.ts';
import { judgedFindings, repetitionFinding } from './judged-findings.ts';
import type { JudgeCounters } from './judge-stats.ts';
import type { ResultRecord } from './ledger/record.ts';

/**
 * Emission: a window's recorded result becomes its nine findings (eight judged questions and
 * the computed repetition) and the alarms among them, handed to `onFindings`. No bound: a
 * window has nine findings. A failure to build or hand them on is a fault, reported and
 * answered with no finding ids — the window's fate still names what happened.
 */
export class Emitter {
  readonly #onFindings: (findings: Finding[], alarms: Finding[]) => void;
  readonly #counters: JudgeCounters;
  readonly #faults: FaultReporter;

  constructor(onFindings: (findings: Finding[], alarms: Finding[]) => void, counters: JudgeCounters, faults: FaultReporter) {
    this.#onFindings = onFindings;
    this.#counters = counters;
    this.#faults = faults;
  }

  /** The ids of the findings handed on. `replay`: the result comes from the ledger, so these findings paid for nothing new. */
  emit(t: Trajectory, checks: CheckResults, window: TraceWindow, result: ResultRecord, provenance: Provenance, replay = false): string[] {
    try {
      const { findings, alarms } = judgedFindings(t, window, result, provenance, replay);
      findings.push(repetitionFinding(t, window, checks, provenance));
      this.#counters.findings += findings.length;
      this.#counters.alarms += alarms.length;
      this.#onFindings(findings, alarms);
      return findings.map((f) => f.finding_id);
    } catch (err) {
      this.#faults.report('emit', err);
      return [];
    }
  }
}

/** The provenance the inline findings of the same trajectory carry (they all share it). */
export function provenanceOf(findings: readonly Finding[]): Provenance {
  const f = findings[0];
  return f === undefined ? NO_PROVENANCE : { treatment: f.treatment, conditions: f.conditions };
}
