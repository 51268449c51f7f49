import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StorageError } from '../../errors.ts';
import type { AuthCheck } from '../../ingest/otlp/auth.ts';
import type { LabelData } from './label-data.ts';
import { allowedHostNames, checkHost, checkWriteOrigin } from './request-origin.ts';

/** The page's files, served as they are: no build step, nothing from a CDN. */
const STATIC: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/dom.js': { file: 'dom.js', type: 'text/javascript; charset=utf-8' },
  '/event-view.js': { file: 'event-view.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/trajectory.js': { file: 'trajectory.js', type: 'text/javascript; charset=utf-8' },
};
/** The trajectory page: one HTML file for every `/trajectories/KEY`; its script asks the API for KEY. */
const TRAJECTORY_PAGE = { file: 'trajectory.html', type: 'text/html; charset=utf-8' };
const STATIC_DIR = new URL('./static/', import.meta.url);
/** A label is a few hundred bytes; anything much larger is not one. */
const MAX_BODY_BYTES = 16 * 1024;

// The page and its API say what the browser may do: no scripts, styles or connections but its
// own, no framing (a labeling page is a place where clicks write gold).
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export interface LabelServerOptions {
  data: LabelData;
  /** The same token check as `serve`'s receivers; the page sends the token as a bearer header. */
  auth: AuthCheck;
  /** Whether a token is configured (the page then asks for it). */
  authRequired: boolean;
  /** Show the judge's answers before a label is recorded (default: blind). */
  reveal: boolean;
  /**
   * Host names the server answers to (`allowedHostNames`); any other `Host` is refused, page
   * and API (DNS rebinding). `startLabelServer` defaults it from the listen address.
   */
  allowedHosts: readonly string[];
  /** Why the list is empty, when it is (the judge off, nothing judged yet): `why` in `/api/windows`. */
  emptyReason?: string;
  /**
   * The trajectory page's data (`/api/trajectories/KEY`): the timeline of the trajectory KEY
   * names (a key, a unique prefix, or a trace id), or a 404 with why. Absent: no trajectory page.
   */
  trajectory?: (key: string) => Promise<{ found: true; view: unknown } | { found: false; why: string }>;
}

/**
 * The labeling page's HTTP handler. Static files need no token (they hold no data); every
 * `/api/` request does when one is configured. Every request must name an allowed `Host`, and
 * a write must carry its own `Origin` (`request-origin.ts`), token or not. Bad input gets a 4xx
 * with a JSON `{error, message}`; nothing is written unless the gold store accepted the label.
 */
export function labelHandler(o: LabelServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    handle(o, req, res).catch((err: unknown) => {
      const tampered = err instanceof StorageError;
      send(res, tampered ? 409 : 500, { error: tampered ? 'window-refused' : 'internal', message: (err as Error).message });
    });
  };
}

async function handle(o: LabelServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://label');
  const host = headerOf(req, 'host');
  const wrongHost = checkHost(host, o.allowedHosts);
  if (wrongHost !== null) return send(res, wrongHost.status, { error: wrongHost.error, message: wrongHost.message });
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const wrongOrigin = checkWriteOrigin(headerOf(req, 'origin'), host!);
    if (wrongOrigin !== null) return send(res, wrongOrigin.status, { error: wrongOrigin.error, message: wrongOrigin.message });
  }
  const page = STATIC[url.pathname] ?? (o.trajectory !== undefined && /^\/trajectories\/[^/]+$/.test(url.pathname) ? TRAJECTORY_PAGE : undefined);
  if (page !== undefined && req.method === 'GET') {
    const body = await readFile(new URL(page.file, STATIC_DIR));
    res.writeHead(200, { 'content-type': page.type, ...SECURITY_HEADERS });
    res.end(body);
    return;
  }
  if (!url.pathname.startsWith('/api/')) return send(res, 404, { error: 'not-found', message: `no ${url.pathname}` });
  if (url.pathname === '/api/config' && req.method === 'GET') return send(res, 200, { authRequired: o.authRequired, blind: !o.reveal });
  if (!o.auth((h) => headerOf(req, h))) return send(res, 401, { error: 'unauthorized', message: 'a valid token is required (Authorization: Bearer <token>)' });
  const labeler = url.searchParams.get('labeler');
  if (url.pathname === '/api/windows' && req.method === 'GET') {
    const list = await o.data.list(labeler);
    return send(res, 200, list.windows.length === 0 && o.emptyReason !== undefined ? { ...list, why: o.emptyReason } : list);
  }
  const m = /^\/api\/windows\/([^/]+)$/.exec(url.pathname);
  if (m !== null && req.method === 'GET') {
    const w = await o.data.window(decodeURIComponent(m[1]!), labeler, o.reveal);
    return w === null ? send(res, 404, { error: 'unknown-window', message: `no judged, stored window ${m[1]}` }) : send(res, 200, w);
  }
  const t = /^\/api\/trajectories\/([^/]+)$/.exec(url.pathname);
  if (t !== null && req.method === 'GET' && o.trajectory !== undefined) {
    const r = await o.trajectory(decodeURIComponent(t[1]!));
    return r.found ? send(res, 200, r.view) : send(res, 404, { error: 'unknown-trajectory', message: r.why });
  }
  if (url.pathname === '/api/review' && req.method === 'GET') return send(res, 200, await o.data.review());
  if (url.pathname === '/api/labels' && req.method === 'POST') return postLabel(o, req, res);
  return send(res, 404, { error: 'not-found', message: `no ${req.method} ${url.pathname}` });
}

async function postLabel(o: LabelServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!/^application\/json\b/i.test(req.headers['content-type'] ?? ''))
    return send(res, 415, { error: 'unsupported-media-type', message: 'send application/json' });
  const text = await readBody(req);
  if (text === null) return send(res, 413, { error: 'too-large', message: `a label is at most ${MAX_BODY_BYTES} bytes` });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return send(res, 400, { error: 'invalid', message: 'the body is not JSON' });
  }
  const windowId = typeof (body as { windowId?: unknown })?.windowId === 'string' ? (body as { windowId: string }).windowId : '';
  // Checked before the store is asked: a tampered window refuses (409) and nothing is written.
  const facts = windowId === '' ? undefined : await o.data.labelable(windowId);
  const r = await o.data.gold.observe(body, () => facts);
  switch (r.kind) {
    case 'recorded':
    case 'corrected':
    case 'duplicate':
      return send(res, r.kind === 'duplicate' ? 200 : 201, { result: r.kind, row: r.row, judge: await o.data.judgeAnswerOf(r.row.windowId, r.row.questionId) });
    case 'invalid':
      return send(res, 400, { error: 'invalid', message: r.issues.join('; ') });
    case 'unknown-window':
      return send(res, 404, { error: 'unknown-window', message: `window ${r.windowId} is not a judged window held for labeling` });
    case 'unknown-question':
      return send(res, 404, {
        error: 'unknown-question',
        message: `trajwatch labels no question ${r.questionId} (a verifier's question is labeled as the layer question it asks again)`,
      });
    case 'not-asked':
      return send(res, 422, {
        error: 'question-not-asked',
        message: `${r.questionId} was not asked of this window; it was asked ${r.asked.join(', ') || 'nothing'}`,
      });
    case 'unknown-support':
      return send(res, 422, { error: 'unknown-support', message: `support ${r.support} is not one of ${r.allowed.join(', ')}` });
    case 'conflict':
      return send(res, 409, {
        error: 'conflict',
        message: `you already labeled this question on this window "${r.prior.label}"${r.prior.support ? ` (support ${r.prior.support})` : ''}; the first label is kept; to correct it, send it again with "correction": true (the page's Correct button)`,
      });
  }
}

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes > MAX_BODY_BYTES) over = true;
      else chunks.push(c);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function headerOf(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...SECURITY_HEADERS });
  res.end(JSON.stringify(body));
}

/** Listens on `host:port` (port 0: any free one); without `allowedHosts`, the listen address's names are allowed. */
export async function startLabelServer(
  o: Omit<LabelServerOptions, 'allowedHosts'> & { allowedHosts?: readonly string[] },
  host: string,
  port: number,
): Promise<{ server: Server; url: string }> {
  const server = createServer(labelHandler({ ...o, allowedHosts: o.allowedHosts ?? allowedHostNames(host) }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  const h = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return { server, url: `http://${h}:${a.port}/` };
}
