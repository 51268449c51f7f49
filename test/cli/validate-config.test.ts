import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

async function configFile(content: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'trajwatch-config-')), 'config.json');
  await writeFile(path, content);
  return path;
}

describe('trajwatch validate-config', () => {
  it('accepts a valid file', async () => {
    const path = await configFile(JSON.stringify({ receiver: { otlpHttp: '127.0.0.1:9999' }, assembler: { quietPeriodMs: 500 } }));
    const run = await runCli(['validate-config', path]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(`${path}: valid\n`);
  });

  it('still accepts a file written for the old meaning of checks.options.jsonArgsConventions', async () => {
    const path = await configFile(JSON.stringify({ checks: { options: { jsonArgsConventions: ['genai', 'openinference', 'vercel-ai'] } } }));
    const run = await runCli(['validate-config', path]);
    expect(run.code).toBe(0);
  });

  it('reports every error at once, each naming its key and value', async () => {
    const path = await configFile(
      JSON.stringify({
        bogus: true,
        receiver: { otlpHttp: 'no-port', maxBodyBytes: 0 },
        assembler: { idleTimeoutMs: 'soon' },
      }),
    );
    const run = await runCli(['validate-config', path]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`invalid configuration in ${path}`);
    expect(run.stderr).toContain('bogus: unknown key');
    expect(run.stderr).toMatch(/receiver\.otlpHttp: .*"no-port"/);
    expect(run.stderr).toMatch(/receiver\.maxBodyBytes: .*\(value: 0\)/);
    expect(run.stderr).toMatch(/assembler\.idleTimeoutMs: .*\(value: "soon"\)/);
  });

  it('says when the file is not JSON', async () => {
    const run = await runCli(['validate-config', await configFile('{ nope')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/not valid JSON/);
  });

  it('serve refuses to start on an invalid configuration', async () => {
    const path = await configFile(JSON.stringify({ assembler: { maxOpenTrajectories: -5 } }));
    const run = await runCli(['serve', '--config', path, '--otlp-http', '127.0.0.1:0']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/assembler\.maxOpenTrajectories/);
  });

  it('every command answers --help', async () => {
    for (const command of ['serve', 'replay', 'validate-config']) {
      const run = await runCli([command, '--help']);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`Usage: trajwatch ${command}`));
    }
  });
});

describe('trajwatch schema finding', () => {
  it('prints a draft 2020-12 JSON Schema of a finding', async () => {
    const run = await runCli(['schema', 'finding']);
    expect(run.code).toBe(0);
    const schema = JSON.parse(run.stdout) as { $schema: string; properties: Record<string, unknown>; required: string[] };
    expect(schema.$schema).toMatch(/2020-12/);
    expect(schema.required).toEqual(expect.arrayContaining(['schema_version', 'finding_id', 'claim', 'treatment', 'conditions']));
  });

  it('prints the analysis manifest, and a findings-log record as oneOf finding and manifest', async () => {
    const manifest = await runCli(['schema', 'manifest']);
    expect(manifest.code).toBe(0);
    const m = JSON.parse(manifest.stdout) as { properties: Record<string, { const?: string }>; required: string[] };
    expect(m.properties.record_kind!.const).toBe('analysis-manifest');
    expect(m.required).toEqual(expect.arrayContaining(['manifest_id', 'subject', 'capture', 'checks', 'windows']));
    const record = await runCli(['schema', 'record']);
    expect(record.code).toBe(0);
    const r = JSON.parse(record.stdout) as { oneOf: { $ref: string }[]; $defs: Record<string, unknown> };
    expect(r.oneOf.map((x) => x.$ref)).toEqual(['#/$defs/finding', '#/$defs/analysis_manifest']);
  });

  it('exits 2 for an unknown schema', async () => {
    const run = await runCli(['schema', 'nope']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/expected one of finding/);
  });

  it("validates the local logs' retention keys: units, unknown keys, a segment too large for its bound, all reported at once", async () => {
    const path = await configFile(
      JSON.stringify({
        sinks: {
          retention: {
            trajectories: { maxBytes: 1024 * 1024, segmentBytes: 1024 * 1024 },
            findings: { maxAgeHours: -1, maxSize: 1 },
            alarms: { maxBytes: 'lots' },
          },
        },
      }),
    );
    const run = await runCli(['validate-config', path]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/sinks\.retention\.trajectories\.segmentBytes: segmentBytes must be at most half of maxBytes/);
    expect(run.stderr).toMatch(/sinks\.retention\.findings\.maxAgeHours: .*\(value: -1\)/);
    expect(run.stderr).toContain('sinks.retention.findings.maxSize: unknown key');
    expect(run.stderr).toMatch(/sinks\.retention\.alarms\.maxBytes: .*"lots"/);
    const ok = await configFile(
      JSON.stringify({ sinks: { retention: { trajectories: { maxBytes: 64 * 1024 * 1024, segmentBytes: 8 * 1024 * 1024, maxAgeHours: 24 } } } }),
    );
    expect((await runCli(['validate-config', ok])).code).toBe(0);
  });
});
