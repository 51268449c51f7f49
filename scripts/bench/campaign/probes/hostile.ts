import { gzipSync } from 'node:zlib';
import { postJson } from '../../../../test/reliability/agent-run.ts';
import { agentRunRequest } from '../../../../test/reliability/agent-run.ts';
import { count } from '../accounting.ts';
import { gzipOfZeros } from '../load.ts';
import type { Probe } from '../probe.ts';
import { readJsonLines, sleep, startCampaignServe } from '../serve-process.ts';
import { join } from 'node:path';

interface Hostile {
  name: string;
  body: Buffer | string;
  headers: Record<string, string>;
  path?: string;
  /** The answers that are right for it (default: 400). */
  want?: number[];
}

const HOSTILE: Hostile[] = [
  { name: 'truncated protobuf', body: Buffer.from([0x0a, 0xff, 0xff, 0x03, 0x12]), headers: { 'content-type': 'application/x-protobuf' } },
  { name: 'wrong wire type', body: Buffer.from([0x0d, 1, 2, 3, 4]), headers: { 'content-type': 'application/x-protobuf' } },
  {
    name: 'gzip bomb (1 GiB of zeros)',
    body: gzipOfZeros(1024 * 1024 * 1024),
    headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
    want: [413],
  },
  { name: 'corrupt gzip', body: Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]), headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' } },
  { name: 'JSON nested 200,000 deep', body: `${'['.repeat(200_000)}${']'.repeat(200_000)}`, headers: { 'content-type': 'application/json' } },
  {
    name: 'JSON with a 20 MiB string (over maxBodyBytes)',
    body: JSON.stringify({ resourceSpans: [{ x: 'a'.repeat(20 * 1024 * 1024) }] }),
    headers: { 'content-type': 'application/json' },
    want: [413],
  },
  // Read with U+FFFD for the bad bytes (as the JSON decoder of the protobuf runtime does) or refused.
  {
    name: 'invalid UTF-8 in a span name',
    body: Buffer.concat([
      Buffer.from('{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"' + 'ee'.repeat(16) + '","spanId":"' + 'ee'.repeat(8) + '","name":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}'),
    ]),
    headers: { 'content-type': 'application/json' },
    want: [200, 400],
  },
  { name: 'unknown content type', body: 'hello', headers: { 'content-type': 'text/plain' }, want: [415] },
  { name: 'unknown content encoding', body: 'hello', headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, want: [415] },
  // Partial success: the span refused by name, the rest of the request kept.
  {
    want: [200],
    name: 'span with a 33-byte trace id',
    body: JSON.stringify({
      resourceSpans: [
        { scopeSpans: [{ spans: [{ traceId: 'ab'.repeat(33), spanId: 'cd'.repeat(8), name: 'x', startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] },
      ],
    }),
    headers: { 'content-type': 'application/json' },
  },
  {
    name: 'logs: not a logs request',
    body: gzipSync('{"resourceLogs": 7}'),
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    path: '/v1/logs',
  },
];

/** Hostile bodies between good requests: each answered with a 4xx, nothing accepted lost, serve alive. */
export const hostile: Probe = async () => {
  const serve = await startCampaignServe();
  try {
    const answers: [string, string][] = [];
    let goodSent = 0;
    let goodAcked = 0;
    let not4xx = 0;
    for (const [i, h] of HOSTILE.entries()) {
      const traceId = `babe${i.toString(16).padStart(28, '0')}`;
      goodSent++;
      if ((await postJson(serve.url, agentRunRequest({ traceId }))).status === 200) goodAcked++;
      let status: string;
      try {
        const res = await fetch(`${serve.url}${h.path ?? '/v1/traces'}`, {
          method: 'POST',
          headers: h.headers,
          body: h.body,
          signal: AbortSignal.timeout(30_000),
        });
        const text = (await res.text())
          .slice(0, 90)
          .replace(/[^\x20-\x7e]+/g, ' ')
          .trim();
        status = `${res.status} ${text}`;
        if (!(h.want ?? [400]).includes(res.status)) not4xx++;
        if (res.status === 200 && h.want?.includes(200) === true && h.name.includes('trace id') && !text.includes('rejectedSpans')) not4xx++;
      } catch (error) {
        status = `no answer: ${(error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message}`;
        not4xx++;
      }
      answers.push([h.name, status]);
    }
    await sleep(1_500);
    const healthy = await serve.healthy();
    const closed = readJsonLines<{ key: string }>(join(serve.dataDir, 'trajectories.jsonl')).filter((t) => t.key.startsWith('babe')).length;
    const exit = await serve.stop();
    return {
      name: 'hostile',
      setup: `${HOSTILE.length} hostile bodies, each after a good agent run, to one serve`,
      rows: [
        ...answers.map(([n, s]): [string, string] => [n, `\`${s.replaceAll('`', "'")}\``]),
        ['good runs acknowledged / closed', `${count(goodAcked)} / ${count(closed)} of ${count(goodSent)}`],
        ['SIGTERM', `exit ${exit.code}`],
      ],
      checks: [
        { what: 'every hostile body answered with its clear status (400, 413, 415, or a partial success naming the span)', ok: not4xx === 0 },
        { what: 'every good run acknowledged and closed', ok: goodAcked === goodSent && closed === goodSent },
        { what: '/healthz answers after', ok: healthy },
        { what: 'SIGTERM exits 0', ok: exit.code === 0 },
      ],
    };
  } finally {
    await serve.stop();
  }
};
