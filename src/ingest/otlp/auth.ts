/**
 * Optional shared-secret authentication for the receivers and `/metrics`: a bearer token
 * (`Authorization: Bearer <token>`) or, when `apiKeyHeader` is set, the same token in that
 * header. The token comes only from an environment variable or a file, never from the
 * configuration itself, and is never logged.
 */
import { timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { sha256Bytes } from '../../core/digest.ts';
import { ConfigError } from '../../errors.ts';

export const ReceiverAuthSchema = z
  .strictObject({
    /** Name of the environment variable holding the token. */
    tokenEnv: z.string().min(1).optional(),
    /** Path of a file holding the token (surrounding whitespace is ignored). */
    tokenFile: z.string().min(1).optional(),
    /** Also accept the token in this header (e.g. `x-api-key`); bearer is always accepted. */
    apiKeyHeader: z
      .string()
      .regex(/^[A-Za-z0-9-]+$/, 'must be an HTTP header name')
      .transform((h) => h.toLowerCase())
      .optional(),
  })
  .refine((a) => (a.tokenEnv === undefined) !== (a.tokenFile === undefined), {
    message: 'set exactly one of tokenEnv or tokenFile (the token itself never goes in the configuration)',
  });

export type ReceiverAuth = z.infer<typeof ReceiverAuthSchema>;

/** Header values as both node:http and grpc-js metadata hand them over. */
export type HeaderLookup = (name: string) => string | undefined;

/**
 * Says whether a request carries the token. Built once at start; compares sha256 digests in
 * constant time so response timing says nothing about the token.
 */
export type AuthCheck = (header: HeaderLookup) => boolean;

/** Everyone is let in when no `auth` is configured. */
const OPEN: AuthCheck = () => true;

/**
 * Reads the token (throws ConfigError at start when it is missing or empty; the message names
 * the variable or file, never the value) and returns the check.
 *
 * @example
 * const allowed = createAuthCheck(config.auth);
 * if (!allowed((h) => headerValue(req, h))) answer401();
 */
export function createAuthCheck(auth: ReceiverAuth | undefined, env: Readonly<Record<string, string | undefined>> = process.env): AuthCheck {
  if (auth === undefined) return OPEN;
  const expected = sha256Bytes(readToken(auth, env));
  const matches = (candidate: string | undefined) => candidate !== undefined && candidate !== '' && timingSafeEqual(sha256Bytes(candidate), expected);
  return (header) => {
    const authorization = header('authorization');
    const bearer = authorization === undefined ? undefined : /^\s*bearer\s+(\S+)\s*$/i.exec(authorization)?.[1];
    if (matches(bearer)) return true;
    return auth.apiKeyHeader !== undefined && matches(header(auth.apiKeyHeader)?.trim());
  };
}

function readToken(auth: ReceiverAuth, env: Readonly<Record<string, string | undefined>>): string {
  if (auth.tokenEnv !== undefined) {
    const value = env[auth.tokenEnv]?.trim();
    if (value === undefined || value === '') {
      throw new ConfigError([`receiver.auth.tokenEnv: environment variable ${auth.tokenEnv} is not set or empty`], 'environment');
    }
    return value;
  }
  let text: string;
  try {
    text = readFileSync(auth.tokenFile!, 'utf8');
  } catch (err) {
    throw new ConfigError([`receiver.auth.tokenFile: cannot read ${auth.tokenFile}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`], 'receiver.auth');
  }
  const value = text.trim();
  if (value === '') throw new ConfigError([`receiver.auth.tokenFile: ${auth.tokenFile} is empty`], 'receiver.auth');
  return value;
}
