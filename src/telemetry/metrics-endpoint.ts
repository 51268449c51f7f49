import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * `/metrics` (the Prometheus exposition of `registry`; every gauge is read from its owner now)
 * and `/healthz` (liveness: 200 while the process serves). Served beside the OTLP routes.
 */
export function metricsEndpoint(registry: Registry): Record<'/metrics' | '/healthz', Route> {
  return {
    '/healthz': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok\n');
    },
    '/metrics': (_req, res) => {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    },
  };
}
