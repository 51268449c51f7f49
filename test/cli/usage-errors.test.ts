import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_PATH, runCli } from '../helpers/cli.ts';

const NO_STACK = /\n\s+at /;

describe('usage errors are one line and exit 2, never a stack trace', () => {
  it.each([
    [['tail', '--max']],
    [['tail', '--max', '-1']],
    [['replay', '--findings']],
    [['calibrate', '--bogus']],
    [['tail', '--format', 'yaml']],
    [['tail', '--kind', 'alarm']],
    [['schema', 'finding', '--audience', 'partner']],
    [['label', '--port', '70000']],
    [['calibrate', '--min-kappa', '0.1']],
  ])('%j', async (args) => {
    const { code, stderr } = await runCli(args, 20_000);
    expect(stderr).not.toMatch(NO_STACK);
    expect(stderr).not.toContain('unexpected failure');
    expect(stderr).toMatch(new RegExp(`^trajwatch ${args[0]}: .*--(max|findings|bogus|format|kind|audience|port|min-kappa)`));
    expect(stderr).toContain(`trajwatch ${args[0]} --help`);
    expect(code).toBe(2);
  });

  it('--max=-1 names the flag and what it expects', async () => {
    const { code, stderr } = await runCli(['tail', '--max=-1'], 20_000);
    expect(stderr).toContain('--max: expected a positive integer, got "-1"');
    expect(stderr).not.toMatch(NO_STACK);
    expect(code).toBe(2);
  });
});

describe('tail into a pipe that closes early (`tail | head`)', () => {
  it('ends quietly with exit 0, no EPIPE trace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-epipe-'));
    const line = JSON.stringify({ finding_id: 'f', claim: 'x'.repeat(200) });
    await writeFile(join(dir, 'findings.jsonl'), `${line}\n`.repeat(20_000));
    const child = spawn(process.execPath, [CLI_PATH, 'tail', '--data-dir', dir, '--from-start', '--timeout-ms', '20000'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).not.toMatch(NO_STACK);
    expect(code).toBe(0);
  }, 30_000);
});

describe('tail on a data directory without a findings log', () => {
  it('says what it waits for instead of waiting in silence', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-empty-'));
    const { code, stderr } = await runCli(['tail', '--data-dir', dir, '--timeout-ms', '500'], 20_000);
    expect(stderr).toContain(`waiting for ${join(dir, 'findings.jsonl')} (not there yet)`);
    expect(code).toBe(0);
  });
});

describe('show on a data directory without a trajectory log', () => {
  it('says the log is not there (and what writes it), not that the key is absent from it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'trajwatch-show-empty-'));
    const { code, stderr } = await runCli(['show', 'abc', '--data-dir', dir], 20_000);
    expect(stderr).toContain(`no trajectory log at ${join(dir, 'trajectories.jsonl')}`);
    expect(stderr).not.toContain('no trajectory with key');
    expect(code).toBe(1);
  });
});
