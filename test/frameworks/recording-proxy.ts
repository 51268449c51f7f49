import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync, inflateSync } from 'node:zlib';

/** One OTLP export request that went through the proxy. */
export interface Recorded {
  /** e.g. `/v1/traces`, `/v1/logs`. */
  path: string;
  contentType: string;
  /** The file holding the body, decompressed: `NNN-traces.pb`, `NNN-logs.json`, ... */
  file: string;
  /** What `trajwatch serve` answered. */
  status: number;
}

export interface RecordingProxy {
  /** OTLP/HTTP base URL (exporters append `/v1/traces`, `/v1/logs`). */
  url: string;
  recorded: Recorded[];
  /** Decompressed bodies, in arrival order (same order as `recorded`). */
  bodies: Buffer[];
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP pass-through in front of `trajwatch serve` that writes every export request's
 * body to `dir` before forwarding it unchanged, so a framework's raw telemetry is kept next
 * to what trajwatch made of it. Protobuf bodies are files `trajwatch replay` reads as they are.
 */
export async function startRecordingProxy(target: string, dir: string): Promise<RecordingProxy> {
  await mkdir(dir, { recursive: true });
  const recorded: Recorded[] = [];
  const bodies: Buffer[] = [];
  let n = 0;
  const upstream = new URL(target);
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const encoding = String(req.headers['content-encoding'] ?? '');
      const body = encoding === 'gzip' ? gunzipSync(raw) : encoding === 'deflate' ? inflateSync(raw) : raw;
      const path = (req.url ?? '/').split('?')[0]!;
      const contentType = String(req.headers['content-type'] ?? '');
      n += 1;
      const signal = path.split('/').pop() || 'request';
      const file = `${String(n).padStart(3, '0')}-${signal}.${contentType.includes('json') ? 'json' : 'pb'}`;
      const entry: Recorded = { path, contentType, file, status: 0 };
      recorded.push(entry);
      bodies.push(body);
      void writeFile(join(dir, file), body).then(() => {
        const headers = { ...req.headers, host: upstream.host };
        const forward = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers }, (up) => {
          const back: Buffer[] = [];
          up.on('data', (c: Buffer) => back.push(c));
          up.on('end', () => {
            entry.status = up.statusCode ?? 0;
            res.writeHead(up.statusCode ?? 502, up.headers).end(Buffer.concat(back));
          });
        });
        forward.on('error', (err) => {
          entry.status = 502;
          res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err));
        });
        forward.end(raw);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    recorded,
    bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
