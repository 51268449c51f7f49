import { describe, expect, it } from 'vitest';
import { Registry, register } from 'prom-client';
import type { AnalysisManifest } from '../../src/findings/manifest-schema.ts';
import { pipelineMetrics } from '../../src/pipeline/metrics.ts';
import { sample } from '../helpers/metric-sample.ts';

describe('pipeline metrics', () => {
  it('counts what analysis manifests say: each check by status and reason, each window by fate and reason', async () => {
    const registry = new Registry();
    const m = pipelineMetrics(registry);
    const manifest = {
      checks: [
        { check: 'error-output', status: 'fired', finding_ids: [] },
        { check: 'unguarded-send', status: 'unavailable', reason: 'incomplete-capture', finding_ids: [] },
      ],
      windows: [
        { fate: 'not-sampled', reason: 'rate' },
        { fate: 'judged', finding_ids: [] },
      ],
    } as unknown as AnalysisManifest;
    m.onManifest(manifest);
    m.onManifest(manifest);
    const text = await registry.metrics();
    expect(sample(text, 'trajwatch_check_status_total{check="unguarded-send",status="unavailable",reason="incomplete-capture"}')).toBe(2);
    expect(sample(text, 'trajwatch_check_status_total{check="error-output",status="fired",reason=""}')).toBe(2);
    expect(sample(text, 'trajwatch_window_fates_total{fate="not-sampled",reason="rate"}')).toBe(2);
    expect(sample(text, 'trajwatch_window_fates_total{fate="judged",reason=""}')).toBe(2);
  });

  it('declares nothing and counts nothing without a registry (telemetry off)', async () => {
    pipelineMetrics(undefined).onManifest({ checks: [{ check: 'x', status: 'fired' }], windows: [] } as unknown as AnalysisManifest);
    // prom-client's global registry is where a metric without `registers` would land: nothing did.
    expect(await register.metrics()).not.toMatch(/trajwatch_/);
  });
});
