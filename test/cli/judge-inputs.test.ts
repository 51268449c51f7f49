import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const NO_STACK = /\n\s+at /;
const GOLD_ROW = JSON.stringify({ questionId: 'evidence.unverified-completion', windowId: 'w1', label: 'yes', source: 'reviewer-a' });

async function dataDir(withGold: boolean): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-judge-inputs-'));
  if (withGold) {
    await mkdir(join(dir, 'judge'), { recursive: true });
    await writeFile(join(dir, 'judge', 'gold.jsonl'), `${GOLD_ROW}\n`);
  }
  return dir;
}

describe('calibrate names a missing input, how it is made, and fails', () => {
  it('a missing --gold file', async () => {
    const dir = await dataDir(false);
    const gold = join(dir, 'nope.jsonl');
    const { code, stderr } = await runCli(['calibrate', '--gold', gold, '--data-dir', dir], 20_000);
    expect(stderr).toContain(`no gold labels at ${gold}`);
    expect(stderr).toContain('trajwatch label');
    expect(stderr).not.toMatch(NO_STACK);
    expect(code).toBe(1);
  });

  it('a missing ledger: not "judge anew", not exit 0', async () => {
    const dir = await dataDir(true);
    const { code, stdout, stderr } = await runCli(['calibrate', '--data-dir', dir], 20_000);
    expect(stderr).toContain(`no judge ledger at ${join(dir, 'judge', 'ledger.jsonl')}`);
    expect(stderr).toContain('judge.enabled');
    expect(stdout).not.toContain('judge anew');
    expect(code).toBe(1);
  });

  it('takes --data-dir, as label and reliability do: gold and ledger are read from there', async () => {
    const { stdout } = await runCli(['calibrate', '--help'], 20_000);
    expect(stdout).toContain('--data-dir DIR');
  });
});

describe('reliability names a missing input and draws nothing', () => {
  it('no ledger: exit 1, the path, how it is made, no PNG', async () => {
    const dir = await dataDir(true);
    const png = join(dir, 'judge', 'reliability.png');
    const { code, stderr } = await runCli(['reliability', '--data-dir', dir], 60_000);
    expect(stderr).toContain(`no judge ledger at ${join(dir, 'judge', 'ledger.jsonl')}`);
    expect(stderr).not.toMatch(NO_STACK);
    expect(existsSync(png)).toBe(false);
    expect(code).toBe(1);
  });

  it('no gold: exit 1, names the gold path and trajwatch label', async () => {
    const dir = await dataDir(false);
    await mkdir(join(dir, 'judge'), { recursive: true });
    await writeFile(join(dir, 'judge', 'ledger.jsonl'), '');
    const { code, stderr } = await runCli(['reliability', '--data-dir', dir, '--no-png'], 60_000);
    expect(stderr).toContain(`no gold labels at ${join(dir, 'judge', 'gold.jsonl')}`);
    expect(stderr).toContain('trajwatch label');
    expect(code).toBe(1);
  });
});
