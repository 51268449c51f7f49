import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AssemblerLimitsSchema } from '../../src/assemble/limits.ts';
import { receiverFaults } from '../../src/ingest/otlp/receiver-faults.ts';
import { ReceiverConfigSchema } from '../../src/ingest/otlp/receiver-config.ts';
import { Pipeline } from '../../src/pipeline/pipeline.ts';
import { createLogger, silentLogger } from '../../src/telemetry/logger.ts';
import { HttpServerComponent } from '../../src/topology/components/http-server.ts';

function capture() {
  const raw: string[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => void raw.push(line) } });
  return { logger, msgs: () => raw.map((l) => (JSON.parse(l) as { msg: string }).msg) };
}

const pipeline = () =>
  new Pipeline({
    limits: AssemblerLimitsSchema.parse({}),
    clock: 'arrival',
    analyze: () => ({ checks: { l0: [], repetition: { status: 'unavailable', reasons: ['not analyzed'] }, silenced: [] }, findings: [] }),
    sinks: [],
  });

describe('HttpServerComponent', () => {
  it('stops within its grace when a request never finishes: the connection is cut, the stop resolves', async () => {
    const http = new HttpServerComponent({
      config: ReceiverConfigSchema.parse({ otlpHttp: '127.0.0.1:0' }),
      target: pipeline(),
      observe: () => {},
      routes: {},
      otlp: true,
      logger: silentLogger(),
      closeGraceMs: 300,
    });
    await http.start();
    const { port } = http.server.address() as AddressInfo;
    // A client that announces a body and never sends it.
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write('POST /v1/traces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    const closed = new Promise((r) => socket.once('close', r));
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await http.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(3_000);
    await closed;
  });
});

describe('receiverFaults', () => {
  it('logs refusals (503, UNAVAILABLE) and rejections (4xx) as two episodes, each ended by an accepted request', () => {
    const { logger, msgs } = capture();
    const observe = receiverFaults(logger);
    const outcome = (status: number | string, reason?: string) => ({ status, contentType: 'application/json', spans: 0, rejectedSpans: 0, reason });
    for (let i = 0; i < 5; i++) observe(outcome(503, 'wal-full'));
    observe(outcome('UNAVAILABLE', 'wal-full'));
    observe(outcome(413, 'maxBodyBytes'));
    observe(outcome(413, 'maxBodyBytes'));
    observe(outcome(200));
    observe(outcome('OK'));
    expect(msgs()).toEqual([
      'refusing OTLP requests: wal-full',
      'rejecting OTLP requests: maxBodyBytes',
      'refusing OTLP requests: recovered',
      'rejecting OTLP requests: recovered',
    ]);
  });
});
