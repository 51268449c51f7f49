// The shipped alerting rules (deploy/prometheus/alerts.yml): valid for promtool, unit-tested by
// `promtool test rules` against their test file, and over series trajwatch really exports.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { declaredMetricNames, metricNames, RULES_FILE, RULES_TEST_FILE, shippedRules } from './shipped-rules.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const rules = shippedRules();
const declared = declaredMetricNames();
/** Prometheus's own series, and prom-client's default process series (createMetricRegistry). */
const PROMETHEUS_SERIES = new Set(['up', 'process_start_time_seconds']);

describe('shipped alerting rules', () => {
  beforeAll(async () => {
    // promtool ships with Debian's prometheus package; installs it when missing.
    await run(join(ROOT, 'scripts/setup/prometheus/install.sh'), [], { timeout: 240_000 });
  }, 300_000);

  it('cover what the issue lists: alarms, certification, refusals, backlogs, Kafka, judge budget, no data', () => {
    expect(rules.map((r) => r.alert).sort()).toEqual([
      'TrajwatchAbsent',
      'TrajwatchBacklogNearFull',
      'TrajwatchCertificationLost',
      'TrajwatchCoordinatorAlarm',
      'TrajwatchDown',
      'TrajwatchJudgeBudgetExhausted',
      'TrajwatchJudgeWindowsDeferred',
      'TrajwatchKafkaFailing',
      'TrajwatchKafkaRecordTooLarge',
      'TrajwatchLedgerWriteFailing',
      'TrajwatchNoData',
      'TrajwatchRefusingInput',
      'TrajwatchSpansRefused',
    ]);
    // Coordinator alarms keep the labels an operator routes by.
    expect(rules.find((r) => r.alert === 'TrajwatchCoordinatorAlarm')!.expr).toMatch(/by \(instance, question, service, agent\)/);
  });

  it('each has a severity, a summary, a description and a runbook line', () => {
    for (const r of rules) {
      expect(['critical', 'warning', 'info'], r.alert).toContain(r.labels.severity);
      expect(r.annotations.summary, r.alert).not.toBe('');
      expect(r.annotations.description, r.alert).not.toBe('');
      expect(r.annotations.runbook, r.alert).not.toBe('');
    }
  });

  it("select only series trajwatch exports (or Prometheus's up, prom-client's process start), in the rules and in their tests", () => {
    const used = rules.flatMap((r) => metricNames(r.expr).map((m) => [r.alert, m] as const));
    expect(used.length).toBeGreaterThan(rules.length);
    for (const [alert, metric] of used) expect(declared.has(metric) || PROMETHEUS_SERIES.has(metric), `${alert}: ${metric}`).toBe(true);
    const tests = parse(readFileSync(RULES_TEST_FILE, 'utf8')) as { tests: { input_series: { series: string }[] }[] };
    for (const s of tests.tests.flatMap((t) => t.input_series)) {
      const metric = /^[a-zA-Z_:][\w:]*/.exec(s.series)![0];
      expect(declared.has(metric) || PROMETHEUS_SERIES.has(metric), s.series).toBe(true);
    }
  });

  it('the metric-name check can fail: a made-up name is not declared', () => {
    expect(metricNames('sum by (instance) (rate(trajwatch_made_up_total{a="b"}[5m])) > 0 unless on (instance) up')).toEqual(['trajwatch_made_up_total', 'up']);
    expect(declared.has('trajwatch_made_up_total')).toBe(false);
    expect(declared.has('trajwatch_coordinator_alarms_total')).toBe(true);
  });

  it('pass promtool check rules', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', RULES_FILE], { timeout: 30_000 });
    expect(stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('pass their unit tests (promtool test rules)', async () => {
    const { stdout, stderr } = await run('promtool', ['test', 'rules', RULES_TEST_FILE], { timeout: 60_000 });
    expect(stdout + stderr).toContain('SUCCESS');
  });

  it('promtool test rules fails when a rule stops firing (the unit tests can fail)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-rules-'));
    // The coordinator alarm without its new-series branch misses the first alarm of a series.
    const broken = readFileSync(RULES_FILE, 'utf8').replace(/\n {10}or\n {10}\(\n[\s\S]*?\n {10}\)\n/, '\n');
    expect(broken).not.toBe(readFileSync(RULES_FILE, 'utf8'));
    await writeFile(join(dir, 'alerts.yml'), broken);
    await writeFile(join(dir, 'alerts.test.yml'), readFileSync(RULES_TEST_FILE, 'utf8'));
    await expect(run('promtool', ['test', 'rules', join(dir, 'alerts.test.yml')], { timeout: 60_000 })).rejects.toThrow(/TrajwatchCoordinatorAlarm/);
  });
});
