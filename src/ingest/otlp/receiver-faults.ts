import { FaultLog } from '../../telemetry/fault-log.ts';
import type { Logger } from '../../telemetry/logger.ts';
import type { RequestOutcome } from './receiver-metrics.ts';

/** Answers that mean "trajwatch cannot take this now" (the client retries): HTTP 429/503, gRPC UNAVAILABLE/RESOURCE_EXHAUSTED. */
const REFUSED: ReadonlySet<string> = new Set(['429', '503', 'UNAVAILABLE', 'RESOURCE_EXHAUSTED']);
const OK: ReadonlySet<string> = new Set(['200', 'OK']);

/**
 * The receivers' fault log: refusals (backpressure, limits of the process) and rejections
 * (bad input, missing token, over a size limit) each logged when they begin and when an
 * accepted request ends them, with the count — not once per request.
 */
export function receiverFaults(logger: Logger): (outcome: RequestOutcome) => void {
  const refusing = new FaultLog(logger, 'refusing OTLP requests');
  const rejecting = new FaultLog(logger, 'rejecting OTLP requests');
  return (o) => {
    const status = String(o.status);
    if (OK.has(status)) {
      refusing.ok();
      rejecting.ok();
    } else if (REFUSED.has(status)) refusing.fault(o.reason ?? status, { status });
    else rejecting.fault(o.reason ?? status, { status });
  };
}
