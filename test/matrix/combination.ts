/**
 * The configuration matrix's factors, its constraints, and the configuration one combination
 * runs with. Which combinations run is `MATRIX` (the pairwise subset, test/helpers/pairwise.ts)
 * plus `EXTRA` (the judge, the walk and an external view on every sink of each source).
 */
import { pairwise, type Combination } from '../helpers/pairwise.ts';

export const FACTORS = {
  /** `replay` over files; `serve` with its OTLP/HTTP receiver; two `serve --source kafka` instances with the repartition by session. */
  source: ['replay', 'http', 'kafka'],
  judge: ['off', 'on'],
  walk: ['off', 'on'],
  /** Beside the local logs, always written: none, the Kafka sink, or OTLP evaluation events. */
  sinks: ['local', 'kafka', 'otlp'],
  /** The view of findings.jsonl and alarms.jsonl. */
  localAudience: ['internal', 'external'],
  /** The view of the remote sink (`none` when there is none). */
  remoteAudience: ['none', 'internal', 'external'],
  /** `tiny`: every local log rolls a segment per 4 KiB. */
  retention: ['default', 'tiny'],
} as const;

export type MatrixCombination = Combination<typeof FACTORS>;

/** A combination to run: a level per factor, `sinks` also `all` (Kafka and OTLP evaluation events) in `EXTRA`. */
export type RunCombination = Omit<MatrixCombination, 'sinks'> & { sinks: MatrixCombination['sinks'] | 'all' };

/**
 * - the walk runs on the judge's windows: walk on needs judge on;
 * - `replay` opens no remote sink and keeps what it writes whole (no retention): local sinks and default retention only;
 * - a remote audience exactly when there is a remote sink.
 */
export function allowed(c: MatrixCombination): boolean {
  if (c.walk === 'on' && c.judge === 'off') return false;
  if (c.source === 'replay' && (c.sinks !== 'local' || c.retention !== 'default')) return false;
  return (c.sinks === 'local') === (c.remoteAudience === 'none');
}

export const MATRIX = pairwise(FACTORS, allowed);

/** The combination no test ran before ("walk + external audience halts ingestion"), on every sink each source has. */
export const EXTRA: readonly RunCombination[] = [
  { source: 'replay', judge: 'on', walk: 'on', sinks: 'local', localAudience: 'external', remoteAudience: 'none', retention: 'default' },
  { source: 'http', judge: 'on', walk: 'on', sinks: 'all', localAudience: 'external', remoteAudience: 'external', retention: 'default' },
  { source: 'kafka', judge: 'on', walk: 'on', sinks: 'all', localAudience: 'external', remoteAudience: 'external', retention: 'tiny' },
];

/** `EXTRA` without what `MATRIX` already runs. */
export function combinations(): RunCombination[] {
  const same = (a: RunCombination, b: RunCombination) => JSON.stringify(a) === JSON.stringify(b);
  const extra = EXTRA.filter((e) => !MATRIX.combinations.some((m) => same(m, e)));
  return [...MATRIX.combinations, ...extra];
}

export function title(c: RunCombination): string {
  const remote = c.sinks === 'local' ? '' : ` ${c.sinks}=${c.remoteAudience}`;
  return `${c.source}: judge ${c.judge}, walk ${c.walk}, local=${c.localAudience}${remote}, retention ${c.retention}`;
}

export interface Endpoints {
  /** Replay's (serve is given `--data-dir`). */
  dataDir?: string;
  /** The judge's stand-in endpoint (judge on). */
  modelUrl?: string;
  brokers?: string[];
  /** The Kafka sink's topics (sinks kafka or all). */
  findingsTopic?: string;
  /** The OTLP logs receiver (sinks otlp or all). */
  otlpUrl?: string;
}

const TINY_SEGMENT_BYTES = 4096;

/** The configuration file's content for `c` (merged over each source's own settings). */
export function configFor(c: RunCombination, e: Endpoints): Record<string, unknown> {
  const remote = c.remoteAudience === 'none' ? 'internal' : c.remoteAudience;
  const sinks: Record<string, unknown> = { localLog: { audience: { findings: c.localAudience, alarms: c.localAudience } } };
  if (c.sinks === 'kafka' || c.sinks === 'all') {
    sinks.kafka = {
      brokers: e.brokers,
      createTopics: true,
      topicPartitions: 1,
      topics: { findings: e.findingsTopic, alarms: `${e.findingsTopic}.alarms` },
      audience: { findings: remote, alarms: remote },
    };
  }
  if (c.sinks === 'otlp' || c.sinks === 'all') sinks.otlpEvaluations = { endpoint: e.otlpUrl, audience: remote };
  if (c.retention === 'tiny') {
    const tiny = { segmentBytes: TINY_SEGMENT_BYTES };
    sinks.retention = { trajectories: tiny, findings: tiny, alarms: tiny };
  }
  const judge =
    c.judge === 'off'
      ? {}
      : {
          judge: {
            enabled: true,
            client: { baseUrl: e.modelUrl, model: 'judge', apiKeyEnv: null, backoffMs: 1, timeoutMs: 5_000 },
            sampling: { rate: 0, triggers: { l0Hit: true, outbound: false, terminal: true } },
            walk: { enabled: c.walk === 'on' },
          },
        };
  return { ...(e.dataDir === undefined ? {} : { dataDir: e.dataDir }), sinks, ...judge };
}
