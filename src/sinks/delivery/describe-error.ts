import { UpstreamError } from '../../errors.ts';

/** `Name: message: cause message`, as stats and logs show a delivery failure. */
export function describeError(err: unknown): string {
  const wrapped = err instanceof Error ? err : new UpstreamError(String(err));
  const cause = wrapped.cause instanceof Error ? `: ${wrapped.cause.message}` : '';
  return `${wrapped.name}: ${wrapped.message}${cause}`;
}
