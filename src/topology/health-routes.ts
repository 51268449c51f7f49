import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JudgeHealthReport } from '../judge/judge-health.ts';
import type { RunningTopology } from './running.ts';

type Route = (req: IncomingMessage, res: ServerResponse) => void;

/** What `/healthz` and `/readyz` answer, as JSON. */
export interface HealthReport {
  /**
   * `starting` until every component started; `unhealthy` while a component reports a reason
   * (input is refused then, with that reason); `degraded` while one only works worse (the
   * judge's calls fail: findings still flow, judged windows escalate without an answer); else `ok`.
   */
  status: 'starting' | 'ok' | 'degraded' | 'unhealthy';
  /** Each component: `ok`, why it cannot do its work now (its refusal), or `degraded: <why>`. */
  components: Record<string, string>;
  /** The judge's calls in detail (its state is also the `judge` component's). */
  judge: JudgeHealthReport;
}

/** The sources of the report; `running` is set once the topology is built (the server is built before it). */
export interface HealthSources {
  running?: RunningTopology;
  judge: () => JudgeHealthReport;
  /**
   * The endpoints answer without a token; with `receiver.auth` set they leave out where the
   * judge is (endpoint, model): only its state and reason.
   */
  redactJudge: boolean;
}

/** The one reading behind `/healthz` and `/readyz`: every component's health, once. */
export function healthReport(sources: HealthSources): HealthReport {
  const running = sources.running;
  const components: Record<string, string> = {};
  let unhealthy = false;
  let degraded = false;
  for (const c of running?.components ?? []) {
    const refusal = c.health();
    const worse = refusal === undefined ? c.degraded?.() : undefined;
    unhealthy ||= refusal !== undefined;
    degraded ||= worse !== undefined;
    components[c.name] = refusal ?? (worse === undefined ? 'ok' : `degraded: ${worse}`);
  }
  const full = sources.judge();
  const judge: JudgeHealthReport =
    sources.redactJudge && full.state !== 'off' ? { ...full, endpoint: '(redacted: receiver.auth is set)', model: '(redacted)' } : full;
  const status = running?.started !== true ? 'starting' : unhealthy ? 'unhealthy' : degraded ? 'degraded' : 'ok';
  return { status, components, judge };
}

/**
 * `/healthz`: every component's health (and the judge's calls), 200 unless a component is unhealthy (503).
 * `/readyz`: 200 once every component started and none is unhealthy, else 503 — start-up work
 * (the span WAL's replay, the ledger's opening) happens before the receivers listen, so a
 * `starting` answer is brief. A failing judge degrades both, never fails them: input is still
 * accepted and analysed.
 */
export function healthRoutes(sources: HealthSources): Record<'/healthz' | '/readyz', Route> {
  const send = (res: ServerResponse, code: number, report: HealthReport) =>
    res.writeHead(code, { 'Content-Type': 'application/json; charset=utf-8' }).end(`${JSON.stringify(report)}\n`);
  return {
    '/healthz': (_req, res) => {
      const report = healthReport(sources);
      send(res, report.status === 'unhealthy' ? 503 : 200, report);
    },
    '/readyz': (_req, res) => {
      const report = healthReport(sources);
      send(res, report.status === 'ok' || report.status === 'degraded' ? 200 : 503, report);
    },
  };
}
