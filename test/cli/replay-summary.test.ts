import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';

const TRACE = '5b8efff798038103d269b633813fc60c';
const str = (stringValue: string) => ({ stringValue });
const request = () =>
  JSON.stringify({
    resourceSpans: [
      {
        scopeSpans: [
          {
            spans: [
              { traceId: TRACE, spanId: 'aaaaaaaaaaaaaaaa', name: 'root', startTimeUnixNano: '1700000000000000000', endTimeUnixNano: '1700000001000000000' },
              {
                traceId: TRACE,
                spanId: 'bbbbbbbbbbbbbbbb',
                parentSpanId: 'aaaaaaaaaaaaaaaa',
                name: 'execute_tool search',
                startTimeUnixNano: '1700000000100000000',
                endTimeUnixNano: '1700000000900000000',
                attributes: [
                  { key: 'gen_ai.operation.name', value: str('execute_tool') },
                  { key: 'gen_ai.tool.name', value: str('search') },
                ],
              },
            ],
          },
        ],
      },
    ],
  });

async function files(): Promise<{ dir: string; good: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'trajwatch-replay-summary-'));
  const good = join(dir, 'traces.json');
  await writeFile(good, request());
  return { dir, good };
}

describe('replay says what it read, kept, found and where it went', () => {
  it('without an output flag: the counts, and that nothing was written', async () => {
    const { good } = await files();
    const { code, stdout, stderr } = await runCli(['replay', good], 60_000);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^replay: done: 1\/1 files, 2 spans \(0 rejected\), 1 trajectories, \d+ findings/m);
    expect(stderr).toContain('nothing written: give --trajectories OUT.jsonl and/or --findings OUT.jsonl');
    expect(code).toBe(0);
  });

  it('with outputs: names each file written', async () => {
    const { dir, good } = await files();
    const out = join(dir, 'out.jsonl');
    const findings = join(dir, 'findings.jsonl');
    const { code, stderr } = await runCli(['replay', good, '--trajectories', out, '--findings', findings], 60_000);
    expect(stderr).toContain(`trajectories written to ${out}`);
    expect(stderr).toContain(`findings written to ${findings}`);
    expect((await readFile(out, 'utf8')).split('\n').filter(Boolean)).toHaveLength(1);
    expect(code).toBe(0);
  });

  it('a failed file is not counted as read; the summary names how many failed', async () => {
    const { dir, good } = await files();
    const bad = join(dir, 'missing.json');
    const { code, stderr } = await runCli(['replay', good, bad], 60_000);
    expect(stderr).toMatch(/^replay: done: 1\/2 files, 2 spans \(0 rejected\), 1 trajectories, \d+ findings, 1 file failed/m);
    expect(code).toBe(1);
  });

  it.each([
    ['a JSON array', 'spans.json', '[{"traceId":"x"}]'],
    ['a JSON object of another kind', 'config.json', '{"receiver":{"otlpHttp":"127.0.0.1:4318"}}'],
    ['a text file named .json', 'notes.json', 'hello, world\n'],
  ])('%s is named as not OTLP/JSON, not as a protobuf error', async (_, name, text) => {
    const { dir } = await files();
    const path = join(dir, name);
    await writeFile(path, text);
    const { code, stderr } = await runCli(['replay', path], 60_000);
    expect(stderr).toContain(`replay: ${path}: not OTLP/JSON`);
    expect(stderr).not.toMatch(/end-group|wire type|protobuf/i);
    expect(stderr).toMatch(/0\/1 files.*1 file failed/);
    expect(code).toBe(1);
  });
});
