import { appendFileSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
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
    expect(log.lines().pending).toBe(4);
    await log.flushed();
    expect(log.lines().pending).toBe(0);
    expect(log.pendingBytes).toBe(0);
    expect(log.lines().written).toBe(4);
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

  it('with retention: rotates under its own name, keeps the newest lines within maxBytes, and truncate removes the closed files too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'jsonl-'));
    const path = join(dir, 'findings.jsonl');
    const retention = { maxBytes: 8192, segmentBytes: 2048 };
    const log = await JsonlLog.open(path, { retention });
    const lines = Array.from({ length: 600 }, (_, i) => JSON.stringify({ i, text: 'x'.repeat(40) }));
    for (const [i, line] of lines.entries()) {
      log.append([line]);
      if (i % 10 === 0) await log.flushed();
    }
    await log.close();
    const names = readdirSync(dir).sort();
    expect(names).toContain('findings.jsonl');
    expect(names.filter((n) => n !== 'findings.jsonl').every((n) => /^findings\.\d{16}\.jsonl$/.test(n))).toBe(true);
    expect(log.disk.fileBytes).toBeLessThanOrEqual(8192);
    expect(log.disk.deletedBytes + log.disk.fileBytes).toBe(lines.reduce((a, l) => a + l.length + 1, 0));
    const kept = names
      .map((n) => readFileSync(join(dir, n), 'utf8'))
      .join('')
      .trim()
      .split('\n');
    expect(kept).toEqual(lines.slice(-kept.length));
    const fresh = await JsonlLog.open(path, { retention, truncate: true });
    await fresh.close();
    expect(readdirSync(dir)).toEqual(['findings.jsonl']);
    expect(readFileSync(path, 'utf8')).toBe('');
  });

  it('cuts a torn final line (a crash mid-write) at open and counts it', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'jsonl-')), 'log.jsonl');
    const first = await JsonlLog.open(path);
    first.append(['{"a":1}']);
    await first.close();
    appendFileSync(path, '{"half":');
    const second = await JsonlLog.open(path);
    expect(second.lines().torn).toBe(1);
    second.append(['{"b":2}']);
    await second.close();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"b":2}\n');
  });
});
