import { canonicalDigest } from '../../core/digest.ts';
import { windowPolicyDigest } from '../../windows/policy.ts';
import type { TraceWindow, WindowRefusal } from '../../windows/window.ts';
import type { JudgeConfig } from '../config.ts';
import { combineActions, decideRecordOnly, SUPPORT_POLICY, type Recommendation } from '../decision-policy.ts';
import { evaluatorIdentity } from '../evaluator-identity.ts';
import type { Ledger, Lookup } from './ledger.ts';
import type { AnswerRecord, InputDigests, IntentRecord, LedgerKey, ResultRecord, SkipRecord } from './record.ts';
import { LEDGER_VERSION } from './record.ts';
import { definitionDigest, requestContractDigest } from '../prompt.ts';
import { SEMANTIC_QUESTIONS, type SemanticQuestion } from '../questions.ts';
import type { Receipt } from '../receipts.ts';

/** The decision point's id and version: the `point` of every ledger key. */
export const TRACE_QUESTIONS_POINT = 'trace-questions@1';

/** What identifies every invocation of this configuration, computed once at open. */
export interface InvocationIdentity {
  windowPolicyDigest: string;
  decisionDigest: string;
  certificatesDigest: string;
  requestDigest: string;
  definitionDigest: string;
  contractDigest: string;
  evaluatorDigest: string;
  requestedModel: string;
}

export function invocationIdentity(cfg: JudgeConfig, certificatesDigest: string): InvocationIdentity {
  return {
    windowPolicyDigest: windowPolicyDigest(cfg.windowPolicy),
    decisionDigest: canonicalDigest(cfg.decision),
    certificatesDigest,
    requestDigest: canonicalDigest({
      model: cfg.client.model,
      maxOutputTokens: cfg.client.maxOutputTokens,
      logprobs: cfg.client.logprobs,
      topLogprobs: cfg.client.topLogprobs,
    }),
    definitionDigest: definitionDigest(),
    contractDigest: requestContractDigest(cfg.client),
    evaluatorDigest: evaluatorIdentity(cfg.client).digest,
    requestedModel: cfg.client.model,
  };
}

/** The key of a window's invocation: `(point, runId, invocationId)`. */
export function ledgerKey(runId: string, window: TraceWindow): LedgerKey {
  return { point: TRACE_QUESTIONS_POINT, runId, invocationId: window.id };
}

/** The digests an invocation of `window` is identified by; any difference under one key is a conflict. Pure. */
export function inputDigests(id: InvocationIdentity, window: TraceWindow): InputDigests {
  const parts = {
    state: canonicalDigest({ kind: window.kind, limitations: window.limitations, events: window.events }),
    request: id.requestDigest,
    definition: id.definitionDigest,
    windowPolicy: window.policyDigest,
    evaluator: id.evaluatorDigest,
    decisionPolicy: id.decisionDigest,
    certificates: id.certificatesDigest,
  };
  return { input: canonicalDigest(parts), ...parts };
}

export type Failure = { kind: string; status?: number; message: string };

/**
 * What the ledger already holds decides a window before anything is paid: `call` (new),
 * `duplicate` (this process is judging it now), `replay` (the recorded result), or
 * `unanswerable` — a conflict, an intent without a result, or a recorded line that cannot be
 * read back — which escalates with that failure and appends nothing. Pure.
 */
export type Prior =
  | { kind: 'call' }
  | { kind: 'duplicate' }
  | { kind: 'replay'; result: ResultRecord }
  | { kind: 'unanswerable'; failure: Failure; counter: 'conflicts' | 'unresolvedIntents' | 'ledgerErrors' };

export function prior(found: Lookup): Prior {
  switch (found.kind) {
    case 'new':
      return { kind: 'call' };
    case 'in-flight':
      return { kind: 'duplicate' };
    case 'replay':
      return { kind: 'replay', result: found.result };
    case 'conflict':
      return {
        kind: 'unanswerable',
        counter: 'conflicts',
        failure: { kind: 'ledger-conflict', message: `same key, changed inputs: ${found.changed.join(', ') || 'input'}` },
      };
    case 'unresolved-intent':
      return {
        kind: 'unanswerable',
        counter: 'unresolvedIntents',
        failure: { kind: 'intent-without-result', message: 'an earlier process recorded the intent but no result; use a new invocation to retry' },
      };
    case 'unreadable':
      // The key is recorded, so it may not be paid for again; its line cannot be read, so nothing replays.
      return { kind: 'unanswerable', counter: 'ledgerErrors', failure: { kind: 'ledger-failure', message: `recorded line unreadable: ${found.message}` } };
  }
}

/**
 * The ledger protocol's records: intent (written, fsync'd, before inference), result (after),
 * and the audit lines of refused and deferred windows. Builds them from the invocation
 * identity and writes them through the ledger, which decides durability, bounds and order.
 */
export class LedgerProtocol {
  readonly ledger: Ledger;
  readonly #id: InvocationIdentity;
  readonly #now: () => number;

  constructor(ledger: Ledger, id: InvocationIdentity, now: () => number) {
    this.ledger = ledger;
    this.#id = id;
    this.#now = now;
  }

  lookup(key: LedgerKey, digests: InputDigests): Prior {
    return prior(this.ledger.lookup(key, digests));
  }

  intent(key: LedgerKey, digests: InputDigests, window: TraceWindow): IntentRecord {
    return {
      v: LEDGER_VERSION,
      type: 'intent',
      key,
      digests,
      window: { windowId: window.id, kind: window.kind, eventMap: window.events.map((e) => ({ id: e.id, uris: e.evidenceRefs.map((r) => r.uri) })) },
      requestedModel: this.#id.requestedModel,
      owner: this.ledger.owner,
      recordedAt: this.#at(),
    };
  }

  result(
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
      owner: this.ledger.owner,
      requestedModel: this.#id.requestedModel,
      servedModel,
      windowPolicyDigest: window.policyDigest,
      windowKind: window.kind,
      requestContractDigest: this.#id.contractDigest,
      evaluatorDigest: this.#id.evaluatorDigest,
      failure,
      answers,
      recommendation,
      receipt: structuredClone(receipt),
      recordedAt: this.#at(),
    };
  }

  /** A result in which every question (of `questions`, the trace questions by default) escalates for the same reason: nothing was answered. */
  unanswered(
    key: LedgerKey,
    digests: InputDigests,
    window: TraceWindow,
    failure: Failure,
    servedModel: string | null,
    receipt: Receipt,
    questions: readonly SemanticQuestion[] = SEMANTIC_QUESTIONS,
  ): ResultRecord {
    const answers = questions.map((q) => ({
      questionId: q.id,
      questionVersion: q.version,
      option: null,
      probabilities: null,
      unseenBound: null,
      support: null,
      recommendation: { action: 'escalate' as const, route: null, reason: failure.kind },
      certificateId: null,
      supportProbability: null,
      supportRecommendation: decideRecordOnly(SUPPORT_POLICY, null, failure.kind),
    }));
    return this.result(key, digests, window, failure, answers, servedModel, receipt);
  }

  skip(type: 'refused' | 'deferred', r: WindowRefusal, windowId: string | null): SkipRecord {
    return {
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
      recordedAt: this.#at(),
    };
  }

  #at(): string {
    return new Date(this.#now()).toISOString();
  }
}
