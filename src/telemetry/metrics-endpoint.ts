import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { OPENMETRICS_CONTENT_TYPE, openMetricsText, prefersOpenMetrics } from './openmetrics.ts';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * `/metrics` (the exposition of `registry`; every gauge is read from its owner now), served
 * beside the OTLP routes and `/healthz` (src/topology/health-routes.ts).
 * `/metrics` answers in OpenMetrics, with exemplars, when the `Accept` header prefers it (as
 * Prometheus's does), else in the Prometheus text format, which carries no exemplars and is
 * what it always was.
 */
export function metricsEndpoint(registry: Registry): Record<'/metrics', Route> {
  return {
    '/metrics': (req, res) => {
      const openMetrics = prefersOpenMetrics(req.headers.accept);
      (openMetrics ? openMetricsText(registry) : registry.metrics()).then(
        (text) => res.writeHead(200, { 'Content-Type': openMetrics ? OPENMETRICS_CONTENT_TYPE : registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500).end(String(err)),
      );
    },
  };
}
