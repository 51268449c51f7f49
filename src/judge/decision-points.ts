import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckResults } from '../checks/check-result.ts';
import { checksConfigSchema, type ChecksConfig } from '../checks/config.ts';
import { toolRoles } from '../checks/tool-roles.ts';
import { canonicalDigest } from '../core/digest.ts';
import { NO_PROVENANCE, type Provenance } from '../findings/provenance/provenance.ts';
import type { Finding } from '../findings/schema.ts';
import { BudgetMeter } from '../windows/budget.ts';
import { extractWindows, windowId, windowRequests, type WindowRequest } from '../windows/extract.ts';
import { windowPolicyDigest } from '../windows/policy.ts';
import type { Sampling } from '../windows/sampling.ts';
import type { TraceWindow, WindowRefusal } from '../windows/window.ts';
import { UNRESOLVED_EVENT_ID } from '../windows/window.ts';
import { loadCertificates, type CertificateStore } from './certificate.ts';
import { ChatClient, type FailureKind } from './client.ts';
import { Consideration, JUDGE_DISABLED, type JudgedPart, type SettleFate } from './consideration.ts';
import { underDataDir, type JudgeConfig } from './config.ts';
import { combineActions, decideQuestion, type Recommendation } from './decision-policy.ts';
import { evaluatorIdentity } from './evaluator-identity.ts';
import { judgedFindings, repetitionFinding } from './judged-findings.ts';
import { Ledger } from './ledger.ts';
import type { AnswerRecord, InputDigests, LedgerKey, ResultRecord } from './ledger-record.ts';
import { LEDGER_VERSION } from './ledger-record.ts';
import { parseAnswers } from './parse-answers.ts';
import { buildRequestBody, definitionDigest, requestContractDigest } from './prompt.ts';
import { attemptCeilingTokens, chargedTokens, emptyReceipt, unknownUsageAttempts, type Receipt } from './receipts.ts';
import { SEMANTIC_QUESTIONS } from './questions.ts';

/** The decision point's id and version: the `point` of every ledger key. */
export const TRACE_QUESTIONS_POINT = 'trace-questions@1';

export interface DecisionPointsOptions {
  /** Receives judged findings (to the sinks) and the alarms among them (to the alarms topic). */
  onFindings: (findings: Finding[], alarms: Finding[]) => void;
  /** Tool classes used to find outbound actions (the `checks` config); defaults apply otherwise. */
  checks?: ChecksConfig;
  /** Provenance of a trajectory; by default taken from its inline findings, else unavailable. */
  provenance?: (t: Trajectory) => Provenance;
  /** Told of unexpected failures (a ledger that stopped accepting writes); never thrown. */
  onError?: (err: unknown) => void;
  fetch?: typeof fetch;
  env?: Readonly<Record<string, string | undefined>>;
  /** Wall clock for the budget and `recordedAt`; never used for identity. */
  now?: () => number;
  /** Told of every judge call when it ends (metrics: latency by outcome). Must not throw. */
  onCall?: (call: JudgeCall) => void;
}

/** One judge call as it ended: how long it took, what came of it, what it cost. */
export interface JudgeCall {
  /** Wall time of the call, retries and backoff included. */
  seconds: number;
  /** `answered`, a transport failure, or `bad-answer` (an answer that did not parse). */
  outcome: 'answered' | FailureKind | 'bad-answer';
  receipt: Receipt;
}

/** Budgets with something left to spend (see `BudgetSchema`), as `stats().budgetRemaining` keys. */
export type BudgetName = 'tokens-per-day' | 'calls-per-minute' | 'queued-windows';

export interface DecisionPointStats {
  windowsBuilt: number;
  refused: Record<string, number>;
  deferred: Record<string, number>;
  /** Invocations dispatched (each may make several physical attempts). */
  calls: number;
  /** Physical HTTP attempts, retries included: each may have been billed. */
  attempts: number;
  /** Attempts whose usage the provider did not report (timeouts, errors): cost unknown, charged at the ceiling. */
  unknownUsageAttempts: number;
  replays: number;
  conflicts: number;
  unresolvedIntents: number;
  duplicates: number;
  failures: Record<string, number>;
  redactions: number;
  findings: number;
  alarms: number;
  ledgerErrors: number;
  /** Tokens the provider reported, summed over attempts; an attempt without usage adds nothing. */
  tokens: { prompt: number; completion: number };
  /** Cost by currency, only for calls priced by `client.pricing`; empty when nothing is priced. */
  cost: Record<string, number>;
  /** What is left of each budget now. */
  budgetRemaining: Record<BudgetName, number>;
  /** Per question: whether an installed certificate qualifies it (see `CertificateStore.qualifies`). */
  certified: Record<string, boolean>;
}

interface Job {
  t: Trajectory;
  checks: CheckResults;
  window: TraceWindow;
  body: Record<string, unknown>;
  key: LedgerKey;
  digests: InputDigests;
  provenance: Provenance;
  estimatedTokens: number;
  /** The most one physical attempt of this request can use (budget charge of an unknown attempt). */
  ceilingTokens: number;
  /** Settles the window's fate in its trajectory's manifest. */
  settle: SettleFate;
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const bump = (m: Record<string, number>, k: string) => {
  m[k] = (m[k] ?? 0) + 1;
};

/**
 * Sampled, bounded windows → one judge request per window → durable ledger → judged findings.
 * `consider` never blocks and never throws; `drain` waits for the calls in flight.
 */
export class DecisionPoints {
  readonly #cfg: JudgeConfig;
  readonly #options: DecisionPointsOptions;
  readonly #ledger: Ledger | undefined;
  readonly #certs: CertificateStore | undefined;
  readonly #client: ChatClient | undefined;
  readonly #budget: BudgetMeter;
  readonly #checksCfg: ChecksConfig;
  readonly #policyDigest: string;
  readonly #decisionDigest: string;
  readonly #certificatesDigest: string;
  readonly #requestDigest: string;
  readonly #definitionDigest: string;
  readonly #contractDigest: string;
  readonly #evaluatorDigest: string;
  readonly #now: () => number;
  readonly #abort = new AbortController();
  readonly #queue: Job[] = [];
  readonly #active = new Set<Promise<void>>();
  #inFlight = 0;
  #lastAdmittedAt: number | undefined;
  #firstErrorLogged = false;
  /** Admission times in the last minute (at most `callsPerMinute`): the calls-per-minute budget. */
  readonly #admittedAt: number[] = [];
  readonly #certified: Record<string, boolean>;
  readonly #stats: Omit<DecisionPointStats, 'budgetRemaining' | 'certified'> = {
    windowsBuilt: 0,
    refused: {},
    deferred: {},
    calls: 0,
    attempts: 0,
    unknownUsageAttempts: 0,
    replays: 0,
    conflicts: 0,
    unresolvedIntents: 0,
    duplicates: 0,
    failures: {},
    redactions: 0,
    findings: 0,
    alarms: 0,
    ledgerErrors: 0,
    tokens: { prompt: 0, completion: 0 },
    cost: {},
  };

  private constructor(
    cfg: JudgeConfig,
    options: DecisionPointsOptions,
    ledger: Ledger | undefined,
    certs: CertificateStore | undefined,
    certificatesDigest: string,
  ) {
    this.#cfg = cfg;
    this.#options = options;
    this.#ledger = ledger;
    this.#certs = certs;
    this.#now = options.now ?? Date.now;
    this.#client = ledger === undefined ? undefined : new ChatClient(cfg.client, { ...(options.fetch ? { fetch: options.fetch } : {}), ...(options.env ? { env: options.env } : {}) });
    this.#budget = new BudgetMeter(cfg.budget, this.#now);
    this.#checksCfg = options.checks ?? checksConfigSchema.parse({});
    this.#policyDigest = windowPolicyDigest(cfg.windowPolicy);
    this.#decisionDigest = canonicalDigest(cfg.decision);
    this.#certificatesDigest = certificatesDigest;
    this.#requestDigest = canonicalDigest({
      model: cfg.client.model,
      maxOutputTokens: cfg.client.maxOutputTokens,
      logprobs: cfg.client.logprobs,
      topLogprobs: cfg.client.topLogprobs,
    });
    this.#definitionDigest = definitionDigest();
    this.#contractDigest = requestContractDigest(cfg.client);
    this.#evaluatorDigest = evaluatorIdentity(cfg.client).digest;
    this.#certified = Object.fromEntries(
      SEMANTIC_QUESTIONS.map((q) => [
        q.id,
        certs?.qualifies({
          questionId: q.id,
          windowPolicyDigest: this.#policyDigest,
          requestContractDigest: this.#contractDigest,
          evaluatorDigest: this.#evaluatorDigest,
          requestedModel: cfg.client.model,
          minKappa: cfg.decision.minKappa,
        }) ?? false,
      ]),
    );
  }

  /**
   * Load certificates (a malformed one refuses start-up with a ConfigError) and open the ledger
   * (a corrupt one, or one locked by a live process, refuses with a StorageError). When the
   * judge is disabled nothing is opened and `consider` does nothing.
   */
  static async open(dataDir: string, config: JudgeConfig, options: DecisionPointsOptions): Promise<DecisionPoints> {
    if (!config.enabled) return new DecisionPoints(config, options, undefined, undefined, canonicalDigest([]));
    const certs = await loadCertificates(underDataDir(dataDir, config.certificatesDir));
    const ledger = await Ledger.open(underDataDir(dataDir, config.ledgerDir));
    return new DecisionPoints(config, options, ledger, certs, certs.digest());
  }

  get enabled(): boolean {
    return this.#ledger !== undefined;
  }

  /** Whether opening took over a ledger lock left by a process that is no longer running. */
  get tookOverDeadLock(): boolean {
    return this.#ledger?.tookOverDeadLock ?? false;
  }

  stats(): DecisionPointStats {
    return { ...structuredClone(this.#stats), budgetRemaining: this.#budgetRemaining(), certified: { ...this.#certified } };
  }

  #budgetRemaining(): Record<BudgetName, number> {
    const budget = this.#cfg.budget;
    const now = this.#now();
    this.#forgetOldAdmissions(now);
    const last = this.#admittedAt.at(-1) ?? this.#lastAdmittedAt;
    // The meter rolls its day only when it next admits: a new UTC day has the whole budget.
    const sameDay = last !== undefined && Math.floor(last / DAY_MS) === Math.floor(now / DAY_MS);
    return {
      'tokens-per-day': Math.max(0, budget.tokensPerDay - (sameDay ? this.#budget.tokensToday : 0)),
      'calls-per-minute': Math.max(0, budget.callsPerMinute - this.#admittedAt.length),
      'queued-windows': Math.max(0, budget.maxQueuedWindows - this.#queue.length),
    };
  }

  #forgetOldAdmissions(now: number): void {
    while (this.#admittedAt.length > 0 && this.#admittedAt[0]! <= now - MINUTE_MS) this.#lastAdmittedAt = this.#admittedAt.shift();
  }

  /**
   * Called for every closed trajectory after the inline checks. Builds the windows it asks for,
   * records every refusal and deferral, replays what the ledger already answered, and queues
   * the rest within budget. Returns at once and never throws: with every window's fate when
   * none was queued (no promise on the hot path), else a promise of them that resolves — never
   * rejects — once each queued window's findings were handed to `onFindings` or it was
   * deferred.
   */
  consider(t: Trajectory, checks: CheckResults, inlineFindings: readonly Finding[]): JudgedPart | Promise<JudgedPart> {
    if (this.#ledger === undefined) return JUDGE_DISABLED;
    const consideration = new Consideration();
    try {
      this.#consider(t, checks, inlineFindings, consideration);
    } catch (err) {
      this.#error(err);
    }
    return consideration.outcome();
  }

  /** Resolves when nothing is queued or in flight. */
  async drain(): Promise<void> {
    while (this.#active.size > 0) await Promise.allSettled([...this.#active]);
  }

  /**
   * Records queued windows as deferred (`shutdown`), cancels calls in flight (their outcome is
   * still recorded, and escalates), drains, releases the ledger.
   */
  /**
   * From now on nothing new is paid for: windows of trajectories still closing are recorded as
   * deferred (`shutdown`), and queued ones wait for `close()` to record them the same way.
   */
  beginShutdown(): void {
    this.#stopping = true;
  }

  #stopping = false;

  /** Idempotent: the pipeline closes it on shutdown, and the process closes it again on exit. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  #closing: Promise<void> | undefined;

  async #close(): Promise<void> {
    this.#stopping = true;
    // Queued windows were never paid for: record them as deferred rather than start them cancelled.
    for (const job of this.#queue.splice(0)) {
      this.#skip('deferred', refusalOf(job.window, 'shutdown', 'closed before dispatch'), job.window.id);
      job.settle({ fate: 'deferred', finding_ids: [], reason: 'shutdown', detail: 'closed before dispatch' });
    }
    this.#abort.abort();
    await this.drain();
    await this.#ledger?.close();
  }

  #consider(t: Trajectory, checks: CheckResults, inlineFindings: readonly Finding[], c: Consideration): void {
    const policy = this.#cfg.windowPolicy;
    const outbound = toolRoles(t, this.#checksCfg).outbound;
    const requests = windowRequests(t, checks, outbound, this.#cfg.sampling, this.#policyDigest);
    const fateOf = (w: { kind: TraceWindow['kind']; anchor: string; triggers: TraceWindow['triggers'] }) => ({
      window_id: windowId(t.key, t.revision, w.kind, w.anchor, this.#policyDigest),
      kind: w.kind,
      anchor: w.anchor,
      triggers: [...w.triggers],
    });
    for (const n of notSampled(t, checks, outbound, this.#cfg.sampling, this.#policyDigest, requests)) {
      c.add({ ...fateOf(n), fate: 'not-sampled', reason: n.reason, detail: n.detail, finding_ids: [] });
    }
    if (requests.length === 0) return;
    const { windows, refusals } = extractWindows(t, requests, policy, this.#policyDigest);
    for (const r of refusals) {
      this.#skip('refused', r, null);
      c.add({ ...fateOf(r), fate: 'refused', reason: r.reason, detail: r.detail, finding_ids: [] });
    }
    const judged = (window: TraceWindow, findingIds: string[], reason?: string) =>
      c.add({ ...fateOf(window), fate: 'judged', ...(reason === undefined ? {} : { reason }), finding_ids: findingIds });
    const skipped = (window: TraceWindow, fate: 'refused' | 'deferred', reason: string, detail: string) =>
      c.add({ ...fateOf(window), fate, reason, detail, finding_ids: [] });
    const provenance = this.#options.provenance?.(t) ?? provenanceOf(inlineFindings);
    for (const window of windows) {
      const body = buildRequestBody(window, {
        model: this.#cfg.client.model,
        maxOutputTokens: this.#cfg.client.maxOutputTokens,
        logprobs: this.#cfg.client.logprobs,
        topLogprobs: this.#cfg.client.topLogprobs,
      });
      const bytes = Buffer.byteLength(JSON.stringify(body));
      if (bytes > policy.config.maxRequestBytes) {
        const detail = `${bytes} bytes, cap ${policy.config.maxRequestBytes}`;
        this.#skip('refused', refusalOf(window, 'request-bytes', detail), window.id);
        skipped(window, 'refused', 'request-bytes', detail);
        continue;
      }
      this.#stats.windowsBuilt++;
      this.#stats.redactions += window.redactions;
      const digests = this.#digests(window);
      const key: LedgerKey = { point: TRACE_QUESTIONS_POINT, runId: t.key, invocationId: window.id };
      const found = this.#ledger!.lookup(key, digests);
      if (found.kind === 'in-flight') {
        // Judged for an earlier close of this revision: its findings are named by that manifest.
        this.#stats.duplicates++;
        judged(window, [], 'duplicate-in-flight');
        continue;
      }
      if (found.kind === 'replay') {
        this.#stats.replays++;
        judged(window, this.#emit(t, checks, window, found.result, provenance, true), 'replay');
        continue;
      }
      if (found.kind === 'conflict' || found.kind === 'unresolved-intent') {
        // Nothing new is paid for and nothing is appended: the key stays as the ledger has it.
        const conflict = found.kind === 'conflict';
        if (conflict) this.#stats.conflicts++;
        else this.#stats.unresolvedIntents++;
        const failure = conflict
          ? { kind: 'ledger-conflict', message: `same key, changed inputs: ${found.changed.join(', ') || 'input'}` }
          : { kind: 'intent-without-result', message: 'an earlier process recorded the intent but no result; use a new invocation to retry' };
        judged(window, this.#emit(t, checks, window, this.#unanswered(key, digests, window, failure, null, emptyReceipt()), provenance), failure.kind);
        continue;
      }
      if (this.#stopping) {
        this.#skip('deferred', refusalOf(window, 'shutdown', 'the process is stopping'), window.id);
        skipped(window, 'deferred', 'shutdown', 'the process is stopping');
        continue;
      }
      const estimatedTokens = Math.ceil(bytes / 4) + this.#cfg.client.maxOutputTokens;
      const admitted = this.#budget.admit(estimatedTokens, this.#queue.length, this.#inFlight);
      if (!admitted.ok) {
        this.#skip('deferred', refusalOf(window, admitted.reason, `budget: ${admitted.reason}`), window.id);
        skipped(window, 'deferred', admitted.reason, `budget: ${admitted.reason}`);
        continue;
      }
      const now = this.#now();
      this.#forgetOldAdmissions(now);
      this.#admittedAt.push(now);
      const ceilingTokens = attemptCeilingTokens(bytes, this.#cfg.client.maxOutputTokens);
      const settle = c.pending(fateOf(window));
      this.#queue.push({ t, checks, window, body, key, digests, provenance, estimatedTokens, ceilingTokens, settle });
    }
    this.#pump();
  }

  #pump(): void {
    while (!this.#stopping && this.#inFlight < this.#cfg.budget.maxConcurrent && this.#queue.length > 0) {
      const job = this.#queue.shift()!;
      this.#inFlight++;
      const p = this.#judge(job)
        .catch((err: unknown) => {
          this.#error(err);
          job.settle({ fate: 'refused', finding_ids: [], reason: 'judge-error', detail: (err as Error)?.message ?? String(err) });
        })
        .finally(() => {
          this.#inFlight--;
          this.#active.delete(p);
          this.#pump();
        });
      this.#active.add(p);
    }
  }

  async #judge(job: Job): Promise<void> {
    const ledger = this.#ledger!;
    const { window, key, digests } = job;
    try {
      await ledger.appendIntent({
        v: LEDGER_VERSION,
        type: 'intent',
        key,
        digests,
        window: { windowId: window.id, kind: window.kind, eventMap: window.events.map((e) => ({ id: e.id, uris: e.evidenceRefs.map((r) => r.uri) })) },
        requestedModel: this.#cfg.client.model,
        owner: ledger.owner,
        recordedAt: new Date(this.#now()).toISOString(),
      });
    } catch (err) {
      // No durable intent: no inference, and nothing may act.
      this.#stats.ledgerErrors++;
      this.#error(err);
      const ids = this.#emit(job.t, job.checks, window, this.#unanswered(key, digests, window, { kind: 'ledger-failure', message: 'intent not recorded' }, null, emptyReceipt()), job.provenance);
      job.settle({ fate: 'judged', finding_ids: ids, reason: 'ledger-failure' });
      return;
    }
    this.#stats.calls++;
    const started = performance.now();
    const outcome = await this.#client!.complete(job.body, this.#abort.signal);
    const seconds = (performance.now() - started) / 1000;
    this.#spent(job, outcome.receipt);
    let result: ResultRecord;
    if (!outcome.ok) {
      bump(this.#stats.failures, outcome.failure.kind);
      this.#called({ seconds, outcome: outcome.failure.kind, receipt: outcome.receipt });
      result = this.#unanswered(key, digests, window, outcome.failure, null, outcome.receipt);
    } else {
      const parsed = parseAnswers(outcome.content, outcome.logprobs, [...window.events.map((e) => e.id), UNRESOLVED_EVENT_ID]);
      this.#called({ seconds, outcome: parsed.ok ? 'answered' : 'bad-answer', receipt: outcome.receipt });
      if (!parsed.ok) {
        bump(this.#stats.failures, 'bad-answer');
        result = this.#unanswered(key, digests, window, { kind: 'bad-answer', message: parsed.reason }, outcome.servedModel, outcome.receipt);
      } else {
        const answers: AnswerRecord[] = parsed.answers.map((a, i) => {
          const q = SEMANTIC_QUESTIONS[i]!;
          const certification = this.#certs!.certify({
            questionId: q.id,
            windowPolicyDigest: window.policyDigest,
            windowKind: window.kind,
            requestContractDigest: this.#contractDigest,
            evaluatorDigest: this.#evaluatorDigest,
            requestedModel: this.#cfg.client.model,
            servedModel: outcome.servedModel,
            minKappa: this.#cfg.decision.minKappa,
          });
          const recommendation = decideQuestion(a, this.#cfg.decision.questions[q.id]!, certification);
          return {
            questionId: q.id,
            questionVersion: q.version,
            option: a.option,
            probabilities: a.probabilities,
            unseenBound: a.unseenBound ?? null,
            support: a.support,
            recommendation,
            certificateId: certification.valid ? certification.certificateId : null,
          };
        });
        result = this.#result(key, digests, window, null, answers, outcome.servedModel, outcome.receipt);
      }
    }
    try {
      await ledger.appendResult(result);
    } catch (err) {
      // A result that is not durable cannot be replayed, so it may not act.
      this.#stats.ledgerErrors++;
      this.#error(err);
      result = this.#unanswered(key, digests, window, { kind: 'ledger-failure', message: 'result not recorded' }, result.servedModel, result.receipt);
    }
    const ids = this.#emit(job.t, job.checks, window, result, job.provenance);
    job.settle({ fate: 'judged', finding_ids: ids, ...(result.failure === null ? {} : { reason: result.failure.kind }) });
  }

  /**
   * Count every physical attempt: its reported tokens and cost in the stats, and in the budget
   * its reported total or, when unknown, the ceiling. Retries also take calls-per-minute slots.
   */
  #spent(job: Job, receipt: Receipt): void {
    this.#budget.settle(job.estimatedTokens, chargedTokens(receipt, job.ceilingTokens), Math.max(0, receipt.attempts - 1));
    const now = this.#now();
    for (let i = 1; i < receipt.attempts; i++) this.#admittedAt.push(now);
    this.#stats.attempts += receipt.attempts;
    this.#stats.unknownUsageAttempts += unknownUsageAttempts(receipt);
    for (const a of receipt.perAttempt ?? []) {
      this.#stats.tokens.prompt += a.promptTokens ?? 0;
      this.#stats.tokens.completion += a.completionTokens ?? 0;
      if (a.cost !== null && a.currency !== null) this.#stats.cost[a.currency] = (this.#stats.cost[a.currency] ?? 0) + a.cost;
    }
  }

  #called(call: JudgeCall): void {
    try {
      this.#options.onCall?.(call);
    } catch (err) {
      this.#error(err);
    }
  }

  #result(
    key: LedgerKey,
    digests: InputDigests,
    window: TraceWindow,
    failure: ResultRecord['failure'],
    answers: AnswerRecord[],
    servedModel: string | null,
    receipt: Receipt,
  ): ResultRecord {
    const action = combineActions(answers.map((a) => a.recommendation.action));
    const recommendation: Recommendation =
      action === 'act'
        ? { action, route: 'coordinator-alarm', reason: 'calibrated' }
        : { action, route: null, reason: action === 'escalate' ? 'a question escalated' : 'policy' };
    return {
      v: LEDGER_VERSION,
      type: 'result',
      key,
      inputDigest: digests.input,
      owner: this.#ledger!.owner,
      requestedModel: this.#cfg.client.model,
      servedModel,
      windowPolicyDigest: window.policyDigest,
      windowKind: window.kind,
      requestContractDigest: this.#contractDigest,
      evaluatorDigest: this.#evaluatorDigest,
      failure,
      answers,
      recommendation,
      receipt: structuredClone(receipt),
      recordedAt: new Date(this.#now()).toISOString(),
    };
  }

  /** A result in which every question escalates for the same reason: nothing was answered. */
  #unanswered(
    key: LedgerKey,
    digests: InputDigests,
    window: TraceWindow,
    failure: { kind: string; status?: number; message: string },
    servedModel: string | null,
    receipt: Receipt,
  ): ResultRecord {
    const answers = SEMANTIC_QUESTIONS.map((q) => ({
      questionId: q.id,
      questionVersion: q.version,
      option: null,
      probabilities: null,
      unseenBound: null,
      support: null,
      recommendation: { action: 'escalate' as const, route: null, reason: failure.kind },
      certificateId: null,
    }));
    return this.#result(key, digests, window, failure, answers, servedModel, receipt);
  }

  /** Hands a window's judged findings on; returns their ids (none when building them failed). `replay`: the result comes from the ledger, so these findings paid for nothing new. */
  #emit(t: Trajectory, checks: CheckResults, window: TraceWindow, result: ResultRecord, provenance: Provenance, replay = false): string[] {
    try {
      const { findings, alarms } = judgedFindings(t, window, result, provenance, replay);
      findings.push(repetitionFinding(t, window, checks, provenance));
      this.#stats.findings += findings.length;
      this.#stats.alarms += alarms.length;
      this.#options.onFindings(findings, alarms);
      return findings.map((f) => f.finding_id);
    } catch (err) {
      this.#error(err);
      return [];
    }
  }

  #skip(type: 'refused' | 'deferred', r: WindowRefusal, windowId: string | null): void {
    bump(type === 'refused' ? this.#stats.refused : this.#stats.deferred, r.reason);
    const p = this.#ledger!.appendSkip({
      v: LEDGER_VERSION,
      type,
      runId: r.trajectoryKey,
      revision: r.revision,
      windowKind: r.kind,
      anchor: r.anchor,
      windowId,
      triggers: r.triggers,
      reason: r.reason,
      detail: r.detail,
      recordedAt: new Date(this.#now()).toISOString(),
    }).catch((err: unknown) => {
      this.#stats.ledgerErrors++;
      this.#error(err);
    });
    const tracked = p.finally(() => this.#active.delete(tracked));
    this.#active.add(tracked);
  }

  #digests(window: TraceWindow): InputDigests {
    const parts = {
      state: canonicalDigest({ kind: window.kind, limitations: window.limitations, events: window.events }),
      request: this.#requestDigest,
      definition: this.#definitionDigest,
      windowPolicy: window.policyDigest,
      evaluator: this.#evaluatorDigest,
      decisionPolicy: this.#decisionDigest,
      certificates: this.#certificatesDigest,
    };
    return { input: canonicalDigest(parts), ...parts };
  }

  #error(err: unknown): void {
    if (this.#options.onError !== undefined) this.#options.onError(err);
    else if (!this.#firstErrorLogged) {
      this.#firstErrorLogged = true;
      process.stderr.write(`trajwatch judge: ${(err as Error)?.message ?? String(err)}\n`);
    }
  }
}

function refusalOf(w: TraceWindow, reason: string, detail: string): WindowRefusal {
  return { trajectoryKey: w.subject.trajectoryKey, revision: w.subject.revision, kind: w.kind, anchor: w.anchor, triggers: w.triggers, reason, detail };
}

/** Every trigger on and the whole rate: the windows the policy could ask for. */
const EVERY_TRIGGER = { l0Hit: true, outbound: true, terminal: true } as const;

/**
 * The windows the policy could ask for on `t` and did not — a trigger is off, or the rate
 * sample passed the trajectory by — each with that reason. Pure.
 */
function notSampled(
  t: Trajectory,
  checks: CheckResults,
  outbound: readonly number[],
  sampling: Sampling,
  policyDigest: string,
  requested: readonly WindowRequest[],
): { kind: TraceWindow['kind']; anchor: string; triggers: TraceWindow['triggers']; reason: string; detail: string }[] {
  const all = windowRequests(t, checks, outbound, { ...sampling, rate: 1, triggers: EVERY_TRIGGER }, policyDigest);
  if (all.length === requested.length) return [];
  const asked = new Set(requested.map((r) => `${r.kind}:${r.anchorIndex}`));
  const out = [];
  for (const r of all) {
    if (asked.has(`${r.kind}:${r.anchorIndex}`)) continue;
    const step = t.steps[r.anchorIndex]!;
    const off = r.triggers.filter((x) => x !== 'sampled');
    out.push({
      kind: r.kind,
      anchor: `${step.traceId}/${step.id}`,
      triggers: r.triggers,
      reason: off.length > 0 ? 'trigger-off' : 'rate',
      detail: off.length > 0 ? `trigger off: ${off.join(', ')}` : `rate ${sampling.rate}: not in the deterministic sample`,
    });
  }
  return out;
}

/** The provenance the inline findings of the same trajectory carry (they all share it). */
function provenanceOf(findings: readonly Finding[]): Provenance {
  const f = findings[0];
  return f === undefined ? NO_PROVENANCE : { treatment: f.treatment, conditions: f.conditions };
}
