import { Buffer } from 'node:buffer';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import protobuf from 'protobufjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DecodeError } from '../../src/errors.ts';
import type { DecodedLogsRequest } from '../../src/ingest/log-record.ts';
import { decodeOtlpLogsJson } from '../../src/ingest/otlp/json-logs-decode.ts';
import { decodeOtlpLogsProto } from '../../src/ingest/otlp/proto-logs-decode.ts';
import { loadSeeds, type Seed } from './corpus.ts';
import { fuzzBody } from './mutate.ts';

/** Ids, when present, are lower-case hex of their proper length; sizes are not negative. */
function wellFormed(result: DecodedLogsRequest | DecodeError): boolean {
  if (result instanceof DecodeError) return result.message.length > 0;
  return (
    Array.isArray(result.rejected) &&
    result.logs.every(
      (l) =>
        (l.traceId === undefined || /^[0-9a-f]{32}$/.test(l.traceId)) &&
        (l.spanId === undefined || /^[0-9a-f]{16}$/.test(l.spanId)) &&
        typeof l.eventName === 'string' &&
        l.encodedBytes >= 0,
    )
  );
}

const root = protobuf.loadSync(fileURLToPath(new URL('../fixtures/otlp/logs.proto', import.meta.url)));
const requestType = root.lookupType('opentelemetry.proto.logs.v1.ExportLogsServiceRequest');

/**
 * Logs requests made from the trace seeds: each span becomes a log record with the span's
 * ids, attributes and name (as its event name) and a body from its first attribute, so the
 * mutations start from real, well-formed logs requests in both encodings.
 */
function logsSeeds(traceSeeds: readonly Seed[]): Seed[] {
  const out: Seed[] = [];
  for (const seed of traceSeeds) {
    if (seed.format !== 'json') continue;
    const request = JSON.parse(seed.body.toString('utf8')) as {
      resourceSpans?: { resource?: unknown; scopeSpans?: { scope?: unknown; spans?: Record<string, unknown>[] }[] }[];
    };
    const logs = {
      resourceLogs: (request.resourceSpans ?? []).map((rs) => ({
        resource: rs.resource,
        scopeLogs: (rs.scopeSpans ?? []).map((ss) => ({
          scope: ss.scope,
          logRecords: (ss.spans ?? []).map((span) => {
            const attributes = (span['attributes'] as { value?: unknown }[] | undefined) ?? [];
            return {
              timeUnixNano: span['startTimeUnixNano'],
              traceId: span['traceId'],
              spanId: span['spanId'],
              eventName: span['name'],
              attributes,
              ...(attributes[0]?.value === undefined ? {} : { body: attributes[0].value }),
            };
          }),
        })),
      })),
    };
    out.push({ name: `${seed.name} as logs`, format: 'json', body: Buffer.from(JSON.stringify(logs)) });
    const withBytes = JSON.parse(JSON.stringify(logs), (key, value: unknown) =>
      (key === 'traceId' || key === 'spanId') && typeof value === 'string' ? Buffer.from(value, 'hex') : value,
    );
    out.push({
      name: `${seed.name} as logs (protobuf)`,
      format: 'protobuf',
      body: Buffer.from(requestType.encode(requestType.fromObject(withBytes)).finish()),
    });
  }
  return out;
}

let seeds: Seed[];
beforeAll(async () => {
  seeds = logsSeeds(await loadSeeds());
});

describe('fuzzing the OTLP logs decoders with mutated logs requests', () => {
  it('the logs seeds decode cleanly before mutation, the same in both encodings', () => {
    expect(seeds.length).toBeGreaterThan(50);
    for (let i = 0; i < seeds.length; i += 2) {
      const json = decodeOtlpLogsJson(seeds[i]!.body.toString('utf8'));
      const proto = decodeOtlpLogsProto(seeds[i + 1]!.body);
      expect(json, seeds[i]!.name).not.toBeInstanceOf(DecodeError);
      const strip = (d: DecodedLogsRequest | DecodeError) => (d as DecodedLogsRequest).logs.map(({ encodedBytes: _, ...rest }) => rest);
      expect(strip(proto), seeds[i + 1]!.name).toEqual(strip(json));
    }
  });

  it('never throws: every mutated body decodes to records or a DecodeError', () => {
    const outcomes = { decoded: 0, decodeError: 0 };
    fc.assert(
      fc.property(fuzzBody(seeds), (b) => {
        if (b.gzip) return; // gunzip is the receiver's, fuzzed with the trace decoders
        const result = b.format === 'protobuf' ? decodeOtlpLogsProto(b.body) : decodeOtlpLogsJson(b.body.toString('utf8'));
        if (result instanceof DecodeError) outcomes.decodeError++;
        else outcomes.decoded++;
        expect(wellFormed(result)).toBe(true);
      }),
      { numRuns: 2_000, seed: 19 },
    );
    expect(outcomes.decoded).toBeGreaterThan(50);
    expect(outcomes.decodeError).toBeGreaterThan(50);
  });
});
