// docker-compose.yml and the config files it mounts are generated from the stack description
// (scripts/stack/description.ts); `npm run stack -- up` runs the same description with the local
// mapping. These tests fail when a checked-in file drifts from the description, and check the
// local rendering points only at loopback.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { configText, generatedFiles, staleFiles } from '../../scripts/stack/compose.ts';
import { LOCAL_SERVICES, SERVICES } from '../../scripts/stack/description.ts';
import { localMapping } from '../../scripts/stack/mapping.ts';
import { startOrder } from '../../scripts/stack/runner.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const read = (path: string) => (existsSync(join(ROOT, path)) ? readFileSync(join(ROOT, path), 'utf8') : undefined);

describe('the stack description', () => {
  it('generates the checked-in docker-compose.yml, collector-config/*/config.yaml and the mounted configs (run `npm run stack -- compose` after changing it)', () => {
    expect([...generatedFiles().keys()].sort()).toEqual([
      'collector-config/to-kafka/config.yaml',
      'collector-config/to-trajwatch/config.yaml',
      'deploy/prometheus/prometheus.yml',
      'deploy/trajwatch/config.yaml',
      'docker-compose.yml',
    ]);
    expect(staleFiles(read)).toEqual([]);
  });

  it('reports a file that differs or is missing (the check can fail)', () => {
    const edited = (path: string) =>
      path === 'docker-compose.yml' ? `${read(path)}# edited by hand\n` : path === 'deploy/trajwatch/config.yaml' ? undefined : read(path);
    expect(staleFiles(edited).sort()).toEqual(['deploy/trajwatch/config.yaml', 'docker-compose.yml']);
  });

  it('compose: the Collector sends traces and logs to Kafka keyed by trace id, evaluation events in on their own receiver to a file', () => {
    const collector = parse(read('collector-config/to-kafka/config.yaml')!) as {
      exporters: { kafka: Record<string, unknown> };
      service: { pipelines: Record<string, { receivers: string[]; exporters: string[] }> };
    };
    expect(collector.exporters.kafka).toMatchObject({
      traces: { topic: 'otlp_spans', encoding: 'otlp_proto' },
      logs: { topic: 'otlp_logs', encoding: 'otlp_proto' },
      partition_traces_by_id: true,
      partition_logs_by_trace_id: true,
    });
    expect(collector.service.pipelines).toMatchObject({
      traces: { receivers: ['otlp'], exporters: ['kafka'] },
      logs: { receivers: ['otlp'], exporters: ['kafka'] },
      'logs/evaluations': { receivers: ['otlp/evaluations'], exporters: ['file/evaluations'] },
    });
  });

  it('local: every rendered address is loopback, every path under the state directory, every Kafka name suffixed', () => {
    const ports = Object.fromEntries(LOCAL_SERVICES.flatMap((s, i) => Object.keys(s.ports).map((p, j) => [`${s.name}.${p}`, 20_000 + i * 10 + j])));
    const m = localMapping({ stateDir: '/tmp/stack-state', ports, suffix: 'run1' });
    const names = SERVICES.map((s) => s.name);
    for (const s of LOCAL_SERVICES) {
      const texts = [...s.files.flatMap((f) => (f.render === undefined ? [] : [configText(s, f.render, m)])), s.args(m).join(' ')];
      for (const text of texts) {
        for (const name of names) expect(text, `${s.name} names ${name}`).not.toMatch(new RegExp(`\\b${name}:\\d`));
        expect(text).not.toContain('0.0.0.0');
        expect(text).not.toMatch(/(?<![\w-])(\/etc|\/var|\/data\b|\/prometheus\b|\/alertmanager\b)/);
      }
    }
    const otelcol = SERVICES.find((s) => s.name === 'otel-collector')!;
    const collector = parse(configText(otelcol, otelcol.files[0]!.render!, m)) as { exporters: { kafka: { traces: { topic: string } } } };
    expect(collector.exporters.kafka.traces.topic).toBe('otlp_spans-run1');
  });

  it('compose creates every topic of the stack in a one-shot service before the Collector and the members start', () => {
    const compose = parse(read('docker-compose.yml')!) as {
      services: Record<string, { command?: string[]; depends_on?: Record<string, { condition: string }> }>;
    };
    const script = compose.services['kafka-topics']!.command!.join(' ');
    for (const topic of ['otlp_spans', 'otlp_logs', 'trajwatch.sessions', 'otlp_spans.dlq', 'trajwatch.findings', 'trajwatch.alarms'])
      expect(script).toContain(`--create --if-not-exists --topic ${topic} --partitions 6`);
    for (const s of ['otel-collector', 'trajwatch-1', 'trajwatch-2'])
      expect(compose.services[s]!.depends_on!['kafka-topics']).toEqual({ condition: 'service_completed_successfully' });
  });

  it('starts services after what they depend on', () => {
    const order = startOrder().map((s) => s.name);
    for (const s of LOCAL_SERVICES)
      for (const d of Object.keys(s.dependsOn)) expect(order.indexOf(d), `${d} before ${s.name}`).toBeLessThan(order.indexOf(s.name));
    expect(order).not.toContain('grafana');
  });
});
