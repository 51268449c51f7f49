import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { pipelineMetrics } from '../../src/pipeline/metrics.ts';
import { openMetricsText, prefersOpenMetrics } from '../../src/telemetry/openmetrics.ts';
import type { Trajectory } from '../../src/assemble/trajectory.ts';
import type { Analysis } from '../../src/analyze.ts';
import type { Finding } from '../../src/findings/schema.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const FINDING_ID = `f1_${'a'.repeat(64)}`;
const ALARM_ID = `f1_${'b'.repeat(64)}`;
/** What Prometheus 2.x and 3.x send by default. */
const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';

function finding(id: string, over: Partial<Finding> = {}): Finding {
  return {
    finding_id: id,
    analyst_id: 'l0',
    severity: 'low',
    area: 'error-output',
    subject: { trajectory_key: TRACE, trace_ids: [TRACE], service: 'checkout', agent: 'planner', revision: 1 },
    ...over,
  } as Finding;
}

/** A registry with the pipeline's series after one finding and one alarm. */
async function pipelineRegistry(): Promise<Registry> {
  const registry = new Registry();
  const m = pipelineMetrics(registry);
  const trajectory = { complete: true, closedBy: 'quiet', incompleteReasons: [], steps: [] } as unknown as Trajectory;
  m.onTrajectory(trajectory, { findings: [finding(FINDING_ID)] } as unknown as Analysis);
  m.onJudged([], [finding(ALARM_ID, { analyst_id: 'judge', area: 'evidence.unverified-completion' } as Partial<Finding>)]);
  return registry;
}

/** Sample names (with labels) of an exposition, exemplars and comments left out. */
const samples = (text: string) =>
  text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => l.split(' # ')[0]!.replace(/ [^ ]+$/, ''))
    .sort();

describe('OpenMetrics exposition with exemplars', () => {
  it('is chosen only when the Accept header ranks it first, as Prometheus does', () => {
    expect(prefersOpenMetrics(PROMETHEUS_ACCEPT)).toBe(true);
    expect(prefersOpenMetrics('application/openmetrics-text; version=1.0.0')).toBe(true);
    expect(prefersOpenMetrics(undefined)).toBe(false);
    expect(prefersOpenMetrics('*/*')).toBe(false);
    expect(prefersOpenMetrics('text/plain;version=0.0.4')).toBe(false);
    expect(prefersOpenMetrics('text/plain;q=1,application/openmetrics-text;q=0.5')).toBe(false);
    expect(prefersOpenMetrics('application/openmetrics-text;q=0')).toBe(false);
  });

  it('puts the trace and finding behind the latest finding and alarm on their counters', async () => {
    const text = await openMetricsText(await pipelineRegistry());
    expect(text).toContain('# TYPE trajwatch_findings counter\n');
    expect(text).toContain(`trajwatch_findings_total{analyst="l0",severity="low"} 1 # {trace_id="${TRACE}",finding_id="${FINDING_ID}"} 1 `);
    expect(text).toContain(
      `trajwatch_coordinator_alarms_total{question="evidence.unverified-completion",service="checkout",agent="planner"} 1 # {trace_id="${TRACE}",finding_id="${ALARM_ID}"} 1 `,
    );
    expect(text.endsWith('\n# EOF\n')).toBe(true);
  });

  it('leaves the plain-text exposition as it was: no exemplars, same names, also after OpenMetrics scrapes', async () => {
    const registry = await pipelineRegistry();
    const before = await registry.metrics();
    expect(before).not.toContain('trace_id');
    expect(before).toMatch(/^# TYPE trajwatch_findings_total counter$/m);
    const om = await openMetricsText(registry);
    expect(await registry.metrics()).toBe(before);
    // The same series under the same names in both formats.
    expect(samples(om)).toEqual(samples(before));
  });

  it('writes every kind the registry holds with the series names of the text format', async () => {
    const registry = new Registry();
    new Counter({ name: 'a_total', help: 'with "quotes" and a \\ backslash', labelNames: ['l'], registers: [registry] }).inc({ l: 'x"y\nz' }, 2);
    new Counter({ name: 'b_count_of_things', help: 'no _total suffix', registers: [registry] }).inc();
    new Gauge({ name: 'c', help: 'g', registers: [registry] }).set(Number.NaN);
    new Histogram({ name: 'd_seconds', help: 'h', buckets: [1], registers: [registry] }).observe(0.5);
    const om = await openMetricsText(registry);
    expect(om).toContain('# HELP a with \\"quotes\\" and a \\\\ backslash\n# TYPE a counter\na_total{l="x\\"y\\nz"} 2\n');
    // OpenMetrics would name its sample b_count_of_things_total: `unknown` keeps the name.
    expect(om).toContain('# TYPE b_count_of_things unknown\nb_count_of_things 1\n');
    expect(om).toContain('c NaN\n');
    expect(om).toContain('d_seconds_bucket{le="+Inf"} 1\n');
    expect(samples(om)).toEqual(samples(await registry.metrics()));
  });
});
