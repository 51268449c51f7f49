import type { Trajectory } from '../assemble/trajectory.ts';
import type { CheckResults } from '../checks/check-result.ts';
import { checksConfigSchema, type ChecksConfig } from '../checks/config.ts';
import { toolRoles } from '../checks/tool-roles.ts';
import { canonicalDigest } from '../core/digest.ts';
import type { Provenance } from '../findings/provenance/provenance.ts';
import type { Finding } from '../findings/schema.ts';
import { windowRequests } from '../windows/extract.ts';
import type { WindowRefusal } from '../windows/window.ts';
import { admitCall } from './admission.ts';
import { JudgeBudget } from './budget.ts';
import { CallQueue } from './call-queue.ts';
import { loadCertificates, type CertificateStore } from './certificate.ts';
import { Certifier } from './certifier.ts';
import { ChatClient } from './client.ts';
import { Consideration, JUDGE_DISABLED, type JudgedPart, type SettleFate } from './consideration.ts';
import { underDataDir, type JudgeConfig } from './config.ts';
import { Emitter, provenanceOf } from './emit.ts';
import { FaultReporter, type OnFault } from './fault.ts';
import { invoke, type Invocation } from './invoke.ts';
import { keepForLabeling } from './label-hook.ts';
import { LabelWindowStore, type LabelWindowStats } from './label-windows.ts';
import { bump, newCounters, type BudgetName, type DecisionPointStats, type JudgeCall, type JudgeCounters, type LedgerStats } from './judge-stats.ts';
import { Ledger } from './ledger/ledger.ts';
import { inputDigests, invocationIdentity, ledgerKey, LedgerProtocol, type InvocationIdentity } from './ledger/protocol.ts';
import { attemptCeilingTokens, emptyReceipt } from './receipts.ts';
import { fateOf, notSampled, refusalOf } from './window-fates.ts';
import { fitWindows } from './window-fit.ts';
import type { LayerJob } from './walk/layer-reader.ts';
import { layerPoints, type LayerPoints } from './walk/layer-points.ts';
import { runWalk } from './walk/run-walk.ts';
import { newWalkStats, type WalkStats } from './walk/walk-stats.ts';

export { TRACE_QUESTIONS_POINT } from './ledger/protocol.ts';
export type { BudgetName, DecisionPointStats, JudgeCall, WalkStats };

export interface DecisionPointsOptions {
  /** Receives judged findings (to the sinks) and the alarms among them (to the alarms topic). */
  onFindings: (findings: Finding[], alarms: Finding[]) => void;
  /** Tool classes used to find outbound actions (the `checks` config); defaults apply otherwise. */
  checks?: ChecksConfig;
  /** Provenance of a trajectory; by default taken from its inline findings, else unavailable. */
  provenance?: (t: Trajectory) => Provenance;
  /** Told of unexpected failures (a ledger that stopped accepting writes); never thrown. */
  onError?: (err: unknown) => void;
  /** Told of every unexpected fault as a structured event (for a logger); without it, faults are only counted. */
  onFault?: OnFault;
  fetch?: typeof fetch;
  env?: Readonly<Record<string, string | undefined>>;
  /** Wall clock for the budget and `recordedAt`; never used for identity. */
  now?: () => number;
  /** Told of every judge call when it ends (metrics: latency by outcome). Must not throw. */
  onCall?: (call: JudgeCall) => void;
}

const NO_LEDGER: LedgerStats = Object.freeze({ bytes: 0, liveBytes: 0, keys: 0, compactions: 0, skipsNotRecorded: 0 });

/** A queued invocation and what its findings need. */
interface Job extends Invocation {
  t: Trajectory;
  checks: CheckResults;
  provenance: Provenance;
  /** Settles the window's fate in its trajectory's manifest. */
  settle: SettleFate;
}

/** The parts that exist only when the judge is enabled. */
interface Enabled {
  protocol: LedgerProtocol;
  client: ChatClient;
  certifier: Certifier;
  /** The layered walk's decision points, when `judge.walk.enabled`. */
  walk: LayerPoints | undefined;
}

const isLayerJob = (job: Job | LayerJob): job is LayerJob => 'point' in job;

/**
 * Sampled, bounded windows → one judge request per window → durable ledger → judged findings.
 * A composition of small parts, each with its own bounds: `admitCall` (ledger room, then
 * `JudgeBudget`: what may be spent), `CallQueue` (what waits and what runs), `LedgerProtocol`
 * and `invoke` (intent → call → result, replay, conflict), `Certifier` (which answers may
 * act), `Emitter` (findings out), `FaultReporter` (faults counted and told, never thrown).
 * `consider` never blocks and never throws; `drain` waits for the calls in flight.
 */
export class DecisionPoints {
  readonly #cfg: JudgeConfig;
  readonly #options: DecisionPointsOptions;
  readonly #parts: Enabled | undefined;
  readonly #id: InvocationIdentity;
  readonly #checksCfg: ChecksConfig;
  readonly #now: () => number;
  readonly #abort = new AbortController();
  readonly #counters: JudgeCounters;
  readonly #faults: FaultReporter;
  readonly #budget: JudgeBudget;
  readonly #queue: CallQueue<Job | LayerJob>;
  readonly #walkStats: WalkStats = newWalkStats();
  readonly #emitter: Emitter;
  readonly #certifier: Certifier;
  readonly #labelWindows: LabelWindowStore | undefined;
  #stopping = false;
  #closing: Promise<void> | undefined;

  private constructor(
    cfg: JudgeConfig,
    options: DecisionPointsOptions,
    faults: { counters: JudgeCounters; reporter: FaultReporter },
    ledger: Ledger | undefined,
    certs: CertificateStore | undefined,
    certificatesDigest: string,
    labelWindows?: LabelWindowStore,
  ) {
    this.#labelWindows = labelWindows;
    this.#cfg = cfg;
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#checksCfg = options.checks ?? checksConfigSchema.parse({});
    this.#id = invocationIdentity(cfg, certificatesDigest);
    this.#counters = faults.counters;
    this.#faults = faults.reporter;
    this.#budget = new JudgeBudget(cfg.budget, this.#now);
    this.#emitter = new Emitter(options.onFindings, this.#counters, this.#faults);
    this.#certifier = new Certifier(certs, this.#id, cfg.decision);
    this.#queue = new CallQueue<Job | LayerJob>(
      cfg.budget.maxConcurrent,
      (job) => (isLayerJob(job) ? this.#judgeLayer(job) : this.#judge(job)),
      (job, err) => {
        this.#faults.report('judge', err);
        this.#parts?.protocol.ledger.release(job.key);
        if (isLayerJob(job)) job.done({ kind: 'not-judged', fate: 'refused', reason: 'judge-error' });
        else job.settle({ fate: 'refused', finding_ids: [], reason: 'judge-error', detail: (err as Error)?.message ?? String(err) });
      },
    );
    if (ledger !== undefined) {
      const clientOptions = { ...(options.fetch ? { fetch: options.fetch } : {}), ...(options.env ? { env: options.env } : {}) };
      const client = new ChatClient(cfg.client, clientOptions);
      const walkPoints = cfg.walk.enabled && certs !== undefined ? layerPoints(cfg, certs, ledger, this.#now, clientOptions) : undefined;
      this.#parts = { protocol: new LedgerProtocol(ledger, this.#id, this.#now), client, certifier: this.#certifier, walk: walkPoints };
    }
  }

  /**
   * Load certificates (a malformed one refuses start-up with a ConfigError) and open the ledger
   * (a corrupt one, or one locked by a live process, refuses with a StorageError). When the
   * judge is disabled nothing is opened and `consider` does nothing.
   */
  static async open(dataDir: string, config: JudgeConfig, options: DecisionPointsOptions): Promise<DecisionPoints> {
    const counters = newCounters();
    const faults = { counters, reporter: new FaultReporter(counters.faults, options.onFault, options.onError) };
    if (!config.enabled) return new DecisionPoints(config, options, faults, undefined, undefined, canonicalDigest([]));
    const certs = await loadCertificates(underDataDir(dataDir, config.certificatesDir));
    const ledger = await Ledger.open(underDataDir(dataDir, config.ledgerDir), {
      bounds: config.ledger,
      onFault: (err) => faults.reporter.report('ledger', err),
    });
    // Labeling hook (issue 20): judged windows kept, bounded, for `trajwatch label`.
    const labelWindows = config.labelWindows.enabled
      ? await LabelWindowStore.open(underDataDir(dataDir, config.labelWindows.dir), config.labelWindows, options.now)
      : undefined;
    return new DecisionPoints(config, options, faults, ledger, certs, certs.digest(), labelWindows);
  }

  get enabled(): boolean {
    return this.#parts !== undefined;
  }

  /** Whether opening took over a ledger lock left by a process that is no longer running. */
  get tookOverDeadLock(): boolean {
    return this.#parts?.protocol.ledger.tookOverDeadLock ?? false;
  }

  /** The store of windows kept for labeling; null when the judge or the store is off. */
  labelWindowStats(): LabelWindowStats | null {
    return this.#labelWindows?.stats() ?? null;
  }

  stats(): DecisionPointStats & Required<Pick<DecisionPointStats, 'faults' | 'ledger'>> {
    return {
      ...structuredClone(this.#counters),
      ledger: this.#parts?.protocol.ledger.stats() ?? { ...NO_LEDGER },
      budgetRemaining: this.#budget.remaining(this.#queue.length),
      certified: this.#certifier.certified(),
    };
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
    if (this.#parts === undefined) return JUDGE_DISABLED;
    const consideration = new Consideration();
    let walked: Promise<void> | undefined;
    try {
      walked = this.#consider(this.#parts, t, checks, inlineFindings, consideration);
    } catch (err) {
      this.#faults.report('judge', err);
    }
    const part = consideration.outcome();
    // The manifest waits for the walk's findings as it waits for the windows' (never rejects).
    return walked === undefined ? part : Promise.all([part, walked]).then(([p]) => p);
  }

  /** What the layered walk did (zeros when it is off). A copy. */
  walkStats(): WalkStats {
    return structuredClone(this.#walkStats);
  }

  /** Resolves when nothing is queued or in flight. */
  drain(): Promise<void> {
    return this.#queue.drain();
  }

  /**
   * From now on nothing new is paid for: windows of trajectories still closing are recorded as
   * deferred (`shutdown`), and queued ones wait for `close()` to record them the same way.
   */
  beginShutdown(): void {
    this.#stopping = true;
    this.#queue.halt();
  }

  /**
   * Records queued windows as deferred (`shutdown`), cancels calls in flight (their outcome is
   * still recorded, and escalates), drains, releases the ledger. Idempotent: the pipeline
   * closes it on shutdown, and the process closes it again on exit.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#stopping = true;
    // Queued windows were never paid for: record them as deferred rather than start them cancelled.
    for (const job of this.#queue.stop()) {
      this.#parts?.protocol.ledger.release(job.key);
      if (isLayerJob(job)) {
        job.done({ kind: 'not-judged', fate: 'deferred', reason: 'shutdown' });
        continue;
      }
      if (this.#parts !== undefined) this.#skip(this.#parts, 'deferred', refusalOf(job.window, 'shutdown', 'closed before dispatch'), job.window.id);
      job.settle({ fate: 'deferred', finding_ids: [], reason: 'shutdown', detail: 'closed before dispatch' });
    }
    this.#abort.abort();
    await this.drain();
    await this.#parts?.protocol.ledger.close();
  }

  /** Queues the trajectory's windows; returns the walk when one runs (it asks for a sampled trajectory only). */
  #consider(parts: Enabled, t: Trajectory, checks: CheckResults, inlineFindings: readonly Finding[], c: Consideration): Promise<void> | undefined {
    const policyDigest = this.#id.windowPolicyDigest;
    const outbound = toolRoles(t, this.#checksCfg).outbound;
    const requests = windowRequests(t, checks, outbound, this.#cfg.sampling, policyDigest);
    for (const n of notSampled(t, checks, outbound, this.#cfg.sampling, policyDigest, requests)) {
      c.add({ ...fateOf(t, policyDigest, n), fate: 'not-sampled', reason: n.reason, detail: n.detail, finding_ids: [] });
    }
    if (requests.length === 0) return undefined;
    const { windows, refusals } = fitWindows(t, requests, this.#cfg, policyDigest);
    for (const r of refusals) {
      this.#skip(parts, 'refused', r, r.windowId ?? null);
      c.add({ ...fateOf(t, policyDigest, r), fate: 'refused', reason: r.reason, detail: r.detail, finding_ids: [] });
    }
    const provenance = this.#options.provenance?.(t) ?? provenanceOf(inlineFindings);
    for (const { window, body, bytes, fellBack } of windows) {
      // A window judged as a smaller kind than asked for says so in its fate (window-fit.ts).
      const site = { ...fateOf(t, policyDigest, window), ...(fellBack === undefined ? {} : { detail: fellBack }) };
      const judged = (findingIds: string[], reason?: string) =>
        c.add({ ...site, fate: 'judged', ...(reason === undefined ? {} : { reason }), finding_ids: findingIds });
      const skipped = (fate: 'refused' | 'deferred', reason: string, detail: string) => {
        this.#skip(parts, fate, refusalOf(window, reason, detail), window.id);
        c.add({ ...site, fate, reason, detail, finding_ids: [] });
      };
      const { answerFormat } = this.#cfg.client;
      this.#counters.windowsBuilt++;
      this.#counters.redactions += window.redactions;
      const digests = inputDigests(this.#id, window);
      const key = ledgerKey(t.key, window);
      const known = parts.protocol.lookup(key, digests);
      if (known.kind === 'duplicate') {
        // Judged for an earlier close of this revision: its findings are named by that manifest.
        this.#counters.duplicates++;
        judged([], 'duplicate-in-flight');
        continue;
      }
      if (known.kind === 'replay') {
        this.#counters.replays++;
        judged(this.#emitter.emit(t, checks, window, known.result, provenance, true), 'replay');
        continue;
      }
      if (known.kind === 'unanswerable') {
        // Nothing new is paid for and nothing is appended: the key stays as the ledger has it.
        this.#counters[known.counter]++;
        const result = parts.protocol.unanswered(key, digests, window, known.failure, null, emptyReceipt());
        judged(this.#emitter.emit(t, checks, window, result, provenance), known.failure.kind);
        continue;
      }
      if (this.#stopping) {
        skipped('deferred', 'shutdown', 'the process is stopping');
        continue;
      }
      const intentBytes = Buffer.byteLength(JSON.stringify(parts.protocol.intent(key, digests, window))) + 1;
      const estimatedTokens = Math.ceil(bytes / 4) + this.#cfg.client.maxOutputTokens;
      const admitted = admitCall(
        parts.protocol.ledger,
        this.#budget,
        { key, intentBytes, estimatedTokens },
        { queued: this.#queue.length, inFlight: this.#queue.inFlight },
      );
      if (!admitted.ok) {
        skipped('deferred', admitted.reason, admitted.detail);
        continue;
      }
      const ceilingTokens = attemptCeilingTokens(bytes, this.#cfg.client.maxOutputTokens);
      const settle = c.pending(site);
      this.#queue.push({ t, checks, window, body, key, digests, provenance, estimatedTokens, ceilingTokens, settle, answerFormat });
    }
    this.#queue.pump();
    return parts.walk === undefined ? undefined : this.#walk(parts.walk, t, checks, provenance);
  }

  /** The layered walk of one sampled trajectory (`runWalk`). Never rejects. */
  #walk(points: LayerPoints, t: Trajectory, checks: CheckResults, provenance: Provenance): Promise<void> {
    return runWalk(points, t, checks, provenance, {
      policy: this.#cfg.windowPolicy,
      policyDigest: this.#id.windowPolicyDigest,
      ledger: this.#parts!.protocol.ledger,
      budget: this.#budget,
      stats: this.#walkStats,
      stopping: () => this.#stopping,
      queue: this.#queue,
      checksCfg: this.#checksCfg,
      walk: this.#cfg.walk,
      onFindings: (findings, alarms) => this.#options.onFindings(findings, alarms),
      faults: this.#faults,
    });
  }

  async #judgeLayer(job: LayerJob): Promise<void> {
    const parts = this.#parts!;
    const result = await invoke(
      {
        ...parts,
        protocol: job.point.protocol,
        client: job.point.client,
        battery: job.point.decider,
        budget: this.#budget,
        counters: this.#counters,
        faults: this.#faults,
        signal: this.#abort.signal,
        onCall: this.#options.onCall,
      },
      job,
    );
    keepForLabeling(this.#labelWindows, this.#queue, this.#faults, job.window);
    job.done({ kind: 'judged', result });
  }

  async #judge(job: Job): Promise<void> {
    const parts = this.#parts!;
    const result = await invoke(
      { ...parts, budget: this.#budget, counters: this.#counters, faults: this.#faults, signal: this.#abort.signal, onCall: this.#options.onCall },
      job,
    );
    const ids = this.#emitter.emit(job.t, job.checks, job.window, result, job.provenance);
    keepForLabeling(this.#labelWindows, this.#queue, this.#faults, job.window);
    job.settle({ fate: 'judged', finding_ids: ids, ...(result.failure === null ? {} : { reason: result.failure.kind }) });
  }

  /** Count a refusal or deferral and append its audit line (not waited for: the manifest is the durable record). */
  #skip(parts: Enabled, type: 'refused' | 'deferred', r: WindowRefusal, windowId: string | null): void {
    bump(type === 'refused' ? this.#counters.refused : this.#counters.deferred, r.reason);
    const p = parts.protocol.ledger.appendSkip(parts.protocol.skip(type, r, windowId)).then(
      () => undefined,
      (err: unknown) => {
        this.#counters.ledgerErrors++;
        this.#faults.report('ledger', err);
      },
    );
    this.#queue.track(p);
  }
}
