import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

describe('a bad value names where it came from', () => {
  it('from an environment variable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-origin-'));
    const { code, stderr } = await runCli(['serve', '--data-dir', dir], 20_000, { env: { ...process.env, TRAJWATCH_OTLP_HTTP: 'nonsense' } });
    expect(stderr).not.toContain('embedded defaults');
    expect(stderr).toMatch(/receiver\.otlpHttp \(from env TRAJWATCH_OTLP_HTTP\): expected HOST:PORT/);
    expect(code).toBe(1);
  });

  it('from a flag', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-origin-'));
    const { code, stderr } = await runCli(['serve', '--data-dir', dir, '--otlp-http', '127.0.0.1:99999'], 20_000);
    expect(stderr).not.toContain('embedded defaults');
    expect(stderr).toMatch(/receiver\.otlpHttp \(from --otlp-http\): expected HOST:PORT .*"127\.0\.0\.1:99999"/);
    expect(code).toBe(1);
  });

  it('from the file, by its path, when the file set it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-origin-'));
    const file = join(dir, 'c.json');
    await writeFile(file, JSON.stringify({ receiver: { otlpHttp: 'nonsense' } }));
    const { code, stderr } = await runCli(['serve', '--config', file, '--data-dir', dir], 20_000, { env: { ...process.env, TRAJWATCH_OTLP_HTTP: '' } });
    expect(stderr).toContain(`invalid configuration in ${file}`);
    expect(stderr).not.toContain('(from ');
    expect(code).toBe(1);
  });
});
