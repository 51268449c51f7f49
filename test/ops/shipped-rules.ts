import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { parse } from 'yaml';
import { KAFKA_SESSIONS_SOURCE_PREFIX, KAFKA_SOURCE_PREFIX, registerKafkaSourceMetrics } from '../../src/ingest/kafka/metrics.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
export const RULES_FILE = join(ROOT, 'deploy/prometheus/alerts.yml');
export const RULES_TEST_FILE = join(ROOT, 'deploy/prometheus/alerts.test.yml');

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description: string; runbook: string };
}

/** The shipped alerting rules, every group flattened. */
export function shippedRules(): AlertRule[] {
  const file = parse(readFileSync(RULES_FILE, 'utf8')) as { groups: { name: string; rules: AlertRule[] }[] };
  return file.groups.flatMap((g) => g.rules);
}

// Prometheus's own series (`up`) and PromQL words that look like metric names.
const PROMQL_WORDS = new Set([
  'sum',
  'min',
  'max',
  'by',
  'on',
  'and',
  'or',
  'unless',
  'without',
  'offset',
  'rate',
  'increase',
  'max_over_time',
  'min_over_time',
  'time',
  'absent',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
]);

/** Metric names an expression selects (label names and values, and function names, left out). */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/\{[^}]*\}/g, '') // label matchers
    .replace(/\b(by|on|without|ignoring)\s*\([^)]*\)/g, '') // grouping lists
    .replace(/\[[^\]]*\]/g, '') // ranges
    .replace(/'[^']*'|"[^"]*"/g, '');
  const words = bare.match(/\b[a-zA-Z_:][a-zA-Z0-9_:]*\b/g) ?? [];
  return [...new Set(words.filter((w) => !PROMQL_WORDS.has(w) && !/^\d/.test(w)))];
}

/**
 * Every metric name trajwatch declares: the literal `trajwatch_*` names in `src/` (each
 * component declares its series beside its code, docs/topology.md), a histogram's also with
 * `_bucket`, `_sum` and `_count`; and the series a component declares under a prefix (the
 * Kafka source's consumers), read from a real registry they are registered on.
 */
export function declaredMetricNames(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir)) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (path.endsWith('.ts')) {
        for (const m of readFileSync(path, 'utf8').matchAll(/'(trajwatch_[a-z0-9_]+)'/g)) {
          for (const suffix of ['', '_bucket', '_sum', '_count']) names.add(m[1]! + suffix);
        }
      }
    }
  };
  walk(join(ROOT, 'src'));
  for (const prefix of [KAFKA_SOURCE_PREFIX, KAFKA_SESSIONS_SOURCE_PREFIX]) {
    const registry = new Registry();
    // Read only at scrape time: never here.
    registerKafkaSourceMetrics(
      registry,
      () => {
        throw new Error('not scraped');
      },
      prefix,
    );
    for (const m of registry.getMetricsAsArray()) names.add(m.name);
  }
  return names;
}
