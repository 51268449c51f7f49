import type { Attributes, Span, SpanEvent } from '../../src/ingest/span.ts';

/** A span with plausible defaults; tests override what they are about. */
export function makeSpan(overrides: Partial<Span> = {}): Span {
  return {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    parentSpanId: '00f067aa0ba902b7',
    name: 'span',
    kind: 1,
    startTimeUnixNano: 1_700_000_000_000_000_000n,
    endTimeUnixNano: 1_700_000_001_500_000_000n,
    status: { code: 0 },
    attributes: {},
    events: [],
    links: [],
    resource: { 'service.name': 'agent-svc' },
    scope: { name: 'test' },
    encodedBytes: 321,
    ...overrides,
  };
}

/** An `exception` span event as OTel SDKs record it. */
export function exceptionEvent(attributes: Attributes): SpanEvent {
  return { name: 'exception', timeUnixNano: 1_700_000_001_000_000_000n, attributes };
}
