import { z } from 'zod';

/** `HOST:PORT` (IPv6 hosts in brackets), validated and split. */
export const HostPortSchema = z.string().transform((value, ctx) => {
  const parsed = parseHostPort(value);
  if (parsed === undefined) {
    ctx.addIssue({ code: 'custom', message: `expected HOST:PORT with a port from 0 to 65535, got "${value}"` });
    return z.NEVER;
  }
  return parsed;
});

export interface HostPort {
  host: string;
  port: number;
}

export function parseHostPort(value: string): HostPort | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(value);
  if (m === null) return undefined;
  const port = Number(m[2]);
  if (port > 65535) return undefined;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

export function formatHostPort({ host, port }: HostPort): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
