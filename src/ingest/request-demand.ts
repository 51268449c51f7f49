import type { RequestDemand } from './pipeline-input.ts';
import type { DecodedRequest } from './span.ts';

/**
 * What `request` would add to the assembler: at most one new trajectory per distinct trace it
 * names (a trace already open, or one joining an open session, adds none, so this is an upper
 * bound), and the encoded bytes of its spans.
 */
export function demandOf(request: DecodedRequest): RequestDemand {
  const traces = new Set<string>();
  let bytes = 0;
  for (const span of request.spans) {
    traces.add(span.traceId);
    bytes += span.encodedBytes;
  }
  return { trajectories: traces.size, bytes };
}
