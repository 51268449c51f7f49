import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlLog } from '../../src/sinks/jsonl-log.ts';

describe('JsonlLog', () => {
  it('writes every line, multi-byte text intact, one per line, and settles its pending counts', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'jsonl-')), 'log.jsonl');
    const log = await JsonlLog.open(path);
    const lines = ['{"a":1}', JSON.stringify({ text: 'café — 中文 🙂' }), '', JSON.stringify({ lone: '\ud800' })];
    log.append(lines.slice(0, 2));
    log.append(lines.slice(2));
    expect(log.pendingLines).toBe(4);
    await log.flushed();
    expect(log.pendingLines).toBe(0);
    expect(log.pendingBytes).toBe(0);
    expect(log.writtenLines).toBe(4);
    expect(readFileSync(path, 'utf8')).toBe(lines.join('\n') + '\n');
    await log.close();
  });

  it('appends after what the file already holds when reopened', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'jsonl-')), 'log.jsonl');
    const first = await JsonlLog.open(path);
    first.append(['1']);
    await first.close();
    const second = await JsonlLog.open(path);
    second.append(['2', '3']);
    await second.close();
    expect(readFileSync(path, 'utf8')).toBe('1\n2\n3\n');
  });
});
