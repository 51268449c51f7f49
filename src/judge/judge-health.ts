import { FaultLog } from '../telemetry/fault-log.ts';
import type { Logger } from '../telemetry/logger.ts';
import { underDataDir, type JudgeConfig } from './config.ts';
import type { JudgeCall } from './judge-stats.ts';

/** What `/healthz` says of the judge. */
export type JudgeHealthReport =
  | { state: 'off' }
  | {
      /** `no-calls-yet` until the first call ends; `failing` from a failed call until one answers. */
      state: 'ok' | 'no-calls-yet' | 'failing';
      endpoint: string;
      model: string;
      certificates: number;
      reason?: string;
      /** ISO time the current failure episode began. */
      since?: string;
      failedCalls: number;
      answeredCalls: number;
    };

/**
 * The judge's health as its calls show it. A misconfigured or unreachable endpoint makes every
 * window an escalation "without a valid answer", which is easy to miss among findings: the
 * first failed call is logged, then each change of reason, then the recovery with its count and
 * duration (`FaultLog`); `/healthz` carries the state. A call cancelled at shutdown says
 * nothing about the endpoint and is not counted.
 */
export class JudgeHealth {
  readonly #config: JudgeConfig;
  readonly #certificates: number;
  readonly #logger: Logger;
  readonly #faults: FaultLog;
  readonly #now: () => number;
  #reason: string | undefined;
  #sinceMs = 0;
  #failed = 0;
  #answered = 0;

  constructor(logger: Logger, config: JudgeConfig, certificates: number, now: () => number = Date.now) {
    this.#logger = logger;
    this.#config = config;
    this.#certificates = certificates;
    this.#now = now;
    this.#faults = new FaultLog(logger, 'judge calls failing', now);
  }

  /** One line at start: on (endpoint, model, certificates) or off, and what that means for findings. */
  logStart(dataDir: string): void {
    const c = this.#config;
    if (!c.enabled) {
      this.#logger.info({ judge: 'off' }, 'judge off (judge.enabled false): no window is judged; findings are the inline checks only');
      return;
    }
    const certificatesDir = underDataDir(dataDir, c.certificatesDir);
    const key =
      c.client.apiKeyEnv === null
        ? 'no API key'
        : process.env[c.client.apiKeyEnv]
          ? `API key from ${c.client.apiKeyEnv}`
          : `API key env ${c.client.apiKeyEnv} NOT SET`;
    this.#logger.info(
      { judge: 'on', endpoint: c.client.baseUrl, model: c.client.model, certificates: this.#certificates, certificatesDir },
      `judge on: endpoint ${c.client.baseUrl}, model ${c.client.model} (${key}); ${this.#certificates} certificate(s) loaded from ${certificatesDir}` +
        (this.#certificates === 0 ? ' (none: every judged question escalates, none acts)' : ''),
    );
  }

  /** The `onCall` observer. */
  readonly observe = (call: JudgeCall): void => {
    if (call.outcome === 'cancelled') return;
    if (call.outcome === 'answered') {
      this.#answered++;
      this.#reason = undefined;
      this.#faults.ok({ endpoint: this.#config.client.baseUrl });
      return;
    }
    this.#failed++;
    const reason = call.failure?.status === undefined ? call.outcome : `${call.outcome} ${call.failure.status}`;
    if (this.#reason === undefined) this.#sinceMs = this.#now();
    this.#reason = reason;
    this.#faults.fault(reason, { endpoint: this.#config.client.baseUrl, model: this.#config.client.model, detail: call.failure?.message });
  };

  /** Why the judge's calls fail now (`http 500`, `bad-answer`...), from a failed call until one answers; else undefined. */
  failure(): string | undefined {
    return this.#reason;
  }

  report(): JudgeHealthReport {
    const c = this.#config;
    if (!c.enabled) return { state: 'off' };
    const state = this.#reason !== undefined ? 'failing' : this.#answered === 0 ? 'no-calls-yet' : 'ok';
    return {
      state,
      endpoint: c.client.baseUrl,
      model: c.client.model,
      certificates: this.#certificates,
      ...(this.#reason === undefined ? {} : { reason: this.#reason, since: new Date(this.#sinceMs).toISOString() }),
      failedCalls: this.#failed,
      answeredCalls: this.#answered,
    };
  }
}
