/** One probe of the fault campaign: its figures (rows of the doc's table) and its checks. */
export interface ProbeResult {
  name: string;
  /** What was done, one sentence for the doc. */
  setup: string;
  rows: [figure: string, value: string][];
  /** Each check: what must hold, and whether it did. */
  checks: { what: string; ok: boolean }[];
}

export type Probe = (opts: { seconds: number }) => Promise<ProbeResult>;
