import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

/** The README's checkout form, as a new user copies it: `<prefix> <command>`. */
async function documentedForms(): Promise<string[]> {
  const readme = await readFile(`${ROOT}README.md`, 'utf8');
  return [...readme.matchAll(/`((?:npm run|node)[^`]*?)\s*<command>`/g)].map((m) => m[1]!);
}

function run(command: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // Through a shell, with npm and the project's Node 24 on PATH, as a user types it in a checkout.
    const child = spawn('sh', ['-c', command], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PATH: `${ROOT}node_modules/.bin:${process.env.PATH}` },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('the checkout form the README documents', () => {
  it('is documented, and every documented form gives the command its stdout alone: `schema finding` is JSON', async () => {
    const forms = await documentedForms();
    expect(forms.length).toBeGreaterThan(0);
    for (const form of forms) {
      const { code, stdout, stderr } = await run(`${form} schema finding`);
      expect(code, `${form}: ${stderr}`).toBe(0);
      expect(() => JSON.parse(stdout), `${form} schema finding printed: ${stdout.slice(0, 120)}`).not.toThrow();
    }
  }, 60_000);
});
