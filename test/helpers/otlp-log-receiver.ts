import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One OTLP/JSON log record as received (the fields the tests read). */
export interface ReceivedLogRecord {
  eventName?: string;
  traceId?: string;
  spanId?: string;
  timeUnixNano?: string;
  severityNumber?: number;
  body?: { stringValue?: string };
  attributes: Record<string, unknown>;
  resource: Record<string, unknown>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: AnyValue[] } };

export function anyValue(v: AnyValue | undefined): unknown {
  if (v === undefined) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(anyValue);
  return undefined;
}

export const attributesOf = (kvs: { key: string; value: AnyValue }[] | undefined): Record<string, unknown> =>
  Object.fromEntries((kvs ?? []).map((kv) => [kv.key, anyValue(kv.value)]));

interface OtlpLogsJson {
  resourceLogs?: {
    resource?: { attributes?: { key: string; value: AnyValue }[] };
    scopeLogs?: { logRecords?: (Omit<ReceivedLogRecord, 'attributes' | 'resource'> & { attributes?: { key: string; value: AnyValue }[] })[] }[];
  }[];
}

/** Flattens an OTLP/JSON logs request (or one line of the Collector's file exporter). */
export function logRecordsOf(payload: OtlpLogsJson): ReceivedLogRecord[] {
  return (payload.resourceLogs ?? []).flatMap((rl) =>
    (rl.scopeLogs ?? []).flatMap((sl) =>
      (sl.logRecords ?? []).map((r) => ({ ...r, attributes: attributesOf(r.attributes), resource: attributesOf(rl.resource?.attributes) })),
    ),
  );
}

/**
 * A minimal OTLP/HTTP JSON logs receiver for tests: it acknowledges (200) and keeps what it
 * received, in order, or refuses every request (503) while `failing` is set.
 */
export class OtlpLogReceiver {
  readonly records: ReceivedLogRecord[] = [];
  failing = false;
  requests = 0;
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<OtlpLogReceiver> {
    let receiver!: OtlpLogReceiver;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver.requests += 1;
        if (receiver.failing) {
          res.writeHead(503).end();
          return;
        }
        receiver.records.push(...logRecordsOf(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpLogsJson));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    receiver = new OtlpLogReceiver(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1/logs`;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}
