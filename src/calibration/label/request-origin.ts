/**
 * Which names the label server answers to, and which writes it takes. Under the defaults
 * (loopback, no token) a page on another site could otherwise read judged windows and write
 * gold labels: by DNS rebinding (its own name resolving to 127.0.0.1, so to the browser every
 * request is same-origin and only the `Host` header gives it away), or by a cross-site write.
 * So every request must name an allowed host, and every write must carry an `Origin` of the
 * host it was sent to. Pure.
 */

/** The names a loopback listener is reached by. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'] as const;

export type Refusal = { status: 403; error: 'host-not-allowed' | 'origin-required' | 'origin-not-allowed'; message: string };

/** `[::1]` → `::1`, lower case: the form host names are compared in. */
const norm = (name: string) =>
  name
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');

/**
 * The host names allowed for a listen address: the address itself, the loopback names when it
 * is a loopback address, and every name configured (`--allowed-host`, e.g. a reverse proxy's).
 * An unspecified address (`0.0.0.0`, `::`) is never a name anyone is reached by: only the
 * configured names are then allowed.
 */
export function allowedHostNames(listenHost: string, configured: readonly string[] = []): string[] {
  const host = norm(listenHost);
  const names = new Set(configured.map(norm));
  if (host !== '0.0.0.0' && host !== '::') names.add(host);
  if (host === 'localhost' || host === '::1' || /^127\./.test(host)) for (const n of LOOPBACK_NAMES) names.add(n);
  return [...names].sort();
}

/** The host name of a `Host` header (`name[:port]`, `[v6][:port]`), or null when it is not one. */
function hostNameOf(hostHeader: string): string | null {
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(hostHeader)) return null;
  return norm(hostHeader.replace(/:\d{1,5}$/, ''));
}

/** Null when the `Host` header names an allowed host; otherwise why not. */
export function checkHost(hostHeader: string | undefined, allowed: readonly string[]): Refusal | null {
  const name = hostHeader === undefined ? null : hostNameOf(hostHeader);
  if (name !== null && allowed.includes(name)) return null;
  const said = hostHeader === undefined ? 'no Host header' : `Host ${JSON.stringify(hostHeader)}`;
  return {
    status: 403,
    error: 'host-not-allowed',
    message: `${said} is not a name this label server answers to (allowed: ${allowed.join(', ')}). A page under another name (DNS rebinding) may not read windows or write labels; to reach it under another name, start trajwatch label with --allowed-host NAME`,
  };
}

/**
 * Null when a write's `Origin` is the origin it was sent to (`http://` or `https://`, behind a
 * TLS proxy, of the request's own `Host`); otherwise why not. A browser sends `Origin` on every
 * POST; a script writing labels must send it too.
 */
export function checkWriteOrigin(origin: string | undefined, hostHeader: string): Refusal | null {
  if (origin === undefined || origin === '') {
    return {
      status: 403,
      error: 'origin-required',
      message: `a label is written only with an Origin header naming this server (Origin: http://${hostHeader}); a browser sends it on every POST`,
    };
  }
  let ok = false;
  try {
    const u = new URL(origin);
    ok = (u.protocol === 'http:' || u.protocol === 'https:') && u.origin === origin && u.host === hostHeader.toLowerCase();
  } catch {
    ok = false;
  }
  return ok
    ? null
    : {
        status: 403,
        error: 'origin-not-allowed',
        message: `Origin ${JSON.stringify(origin)} is not this server (http://${hostHeader}): a page of another site may not write labels`,
      };
}
