import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const BIN = new URL('../../bin/trajwatch.js', import.meta.url).pathname;
/** An old Node on this machine (Node 20); the test is skipped where there is none. */
const OLD_NODE = '/usr/bin/node';

function run(node: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe.runIf(existsSync(OLD_NODE))('the installed entry on a Node older than engines', () => {
  it.each([[['serve']], [['replay', 'x.json']], [['--help']]])('%j: refuses at start, naming the Node it needs', async (args) => {
    const engines = (JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } }).engines.node;
    const old = await run(OLD_NODE, args);
    const version = await new Promise<string>((resolve) => {
      const c = spawn(OLD_NODE, ['--version']);
      let out = '';
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      c.once('exit', () => resolve(out.trim().replace(/^v/, '')));
    });
    expect(old.stderr).toContain(`needs Node.js ${engines.replace(/^>=\s*/, '')} or newer`);
    expect(old.stderr).toContain(`this is Node.js ${version}`);
    expect(old.stderr).not.toContain('withResolvers');
    expect(old.stderr).not.toMatch(/\n\s+at /);
    expect(old.code).toBe(1);
  });
});

describe('the installed entry on the Node that runs the tests', () => {
  it('passes the version check (then needs dist/, or runs it)', async () => {
    const { stderr } = await run(process.execPath, ['--help']);
    expect(stderr).not.toContain('needs Node.js');
  });
});
