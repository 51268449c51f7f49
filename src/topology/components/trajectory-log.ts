import type { JsonlLog } from '../../sinks/jsonl-log.ts';
import { logRefusal, TRAJECTORY_LOG_REFUSALS } from '../../sinks/log-refusal.ts';
import { type Component, once } from '../component.ts';

/** The trajectory log as a component: closed with the sinks; unhealthy while it cannot write (the pipeline refuses input then). */
export function trajectoryLogComponent(log: JsonlLog, maxPendingBytes: number): Component {
  return {
    name: 'trajectory-log',
    backlogLimit: { bytes: maxPendingBytes },
    start: async () => {},
    stop: once(() => log.close()),
    health: () => logRefusal(log, maxPendingBytes, TRAJECTORY_LOG_REFUSALS),
    backlog: () => ({ records: log.lines().pending, bytes: log.pendingBytes }),
  };
}
