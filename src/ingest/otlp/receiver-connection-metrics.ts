import { Gauge } from 'prom-client';
import { FaultLog } from '../../telemetry/fault-log.ts';
import type { Logger } from '../../telemetry/logger.ts';
import { counter, type MetricRegistry, readGauge } from '../../telemetry/metrics.ts';
import type { ConnectionObserver } from './connection-limits.ts';
import type { InflightBudget } from './inflight-budget.ts';
import type { Transport } from './receiver-metrics.ts';

/**
 * The receivers' connection and in-flight series: `trajwatch_receiver_connections_open{transport}`,
 * `trajwatch_receiver_connections_refused_total{transport,reason}` (closed at accept past
 * `receiver.maxConnections`), `trajwatch_receiver_inflight_bytes` and `_inflight_limit_bytes`
 * (the body budget, both transports). A refused connection is logged when refusals begin and
 * when a connection is accepted again, with the count — never once per connection.
 */
export function connectionMetrics(registry: MetricRegistry, budget: InflightBudget): (transport: Transport, logger: Logger) => ConnectionObserver {
  const open = new Gauge({
    name: 'trajwatch_receiver_connections_open',
    help: 'Connections open on each OTLP receiver listener.',
    labelNames: ['transport'] as const,
    registers: registry === undefined ? [] : [registry],
  });
  const refused = counter(
    registry,
    'trajwatch_receiver_connections_refused_total',
    'Connections closed at accept because the listener was at receiver.maxConnections.',
    ['transport', 'reason'],
  );
  if (registry !== undefined) {
    readGauge(
      registry,
      'trajwatch_receiver_inflight_bytes',
      'Request body bytes in flight (received and inflated) charged to receiver.maxInflightBytes.',
      () => budget.usedBytes,
    );
    readGauge(
      registry,
      'trajwatch_receiver_inflight_limit_bytes',
      'receiver.maxInflightBytes: the in-flight body budget of both receivers.',
      () => budget.limitBytes,
    );
  }
  return (transport, logger) => {
    const faults = new FaultLog(logger, `refusing ${transport} connections`);
    open.set({ transport }, 0);
    return {
      opened: () => {
        open.inc({ transport });
        faults.ok();
      },
      closed: () => open.dec({ transport }),
      refused: () => {
        refused.inc({ transport, reason: 'max-connections' });
        faults.fault('max-connections');
      },
    };
  };
}
