import { ConfigError } from '../errors.ts';
import type { TraceWindow } from '../windows/window.ts';
import { UNRESOLVED_EVENT_ID } from '../windows/window.ts';
import type { JudgeBudget } from './budget.ts';
import type { Certifier } from './certifier.ts';
import type { ChatClient } from './client.ts';
import type { FaultReporter } from './fault.ts';
import { bump, countReceipt, type JudgeCall, type JudgeCounters } from './judge-stats.ts';
import type { LedgerProtocol } from './ledger/protocol.ts';
import type { AnswerRecord, InputDigests, LedgerKey, ResultRecord } from './ledger/record.ts';
import type { AnswerFormat } from './answer-format.ts';
import { parseAnswers, type ParsedAnswer } from './parse-answers.ts';
import { parseJsonAnswers } from './parse-json-answers.ts';
import { SEMANTIC_QUESTIONS, type SemanticQuestion } from './questions.ts';
import { chargedTokens, emptyReceipt, type Receipt } from './receipts.ts';

/** One admitted invocation: what to send, under which key, and what admission reserved for it. */
export interface Invocation {
  window: TraceWindow;
  body: Record<string, unknown>;
  key: LedgerKey;
  digests: InputDigests;
  estimatedTokens: number;
  /** The most one physical attempt of this request can use (budget charge of an unknown attempt). */
  ceilingTokens: number;
  /** The reply shape the body asked for; absent = `lines`. */
  answerFormat?: AnswerFormat | undefined;
}

/**
 * What one decision point asks in a request and how its parsed answers are decided. Absent:
 * the trace questions, decided by the certifier. A layer of the walk and its verifier bring
 * their own (see walk/layer-decider.ts).
 */
export interface Battery {
  questions: readonly SemanticQuestion[];
  decide(parsed: readonly ParsedAnswer[], window: TraceWindow, servedModel: string | null): AnswerRecord[];
}

export interface InvokeParts {
  protocol: LedgerProtocol;
  battery?: Battery | undefined;
  client: ChatClient;
  certifier: Certifier;
  budget: JudgeBudget;
  counters: JudgeCounters;
  faults: FaultReporter;
  signal: AbortSignal;
  onCall?: ((call: JudgeCall) => void) | undefined;
}

/**
 * The ledger protocol of one invocation: intent (durable) → call → result (durable). No
 * intent, no inference; a result that is not durable may not act (`ledger-failure`). Every
 * outcome is a result to emit — a failed call, a bad answer and a ledger failure escalate —
 * so this never rejects for a reason it knows of. Bounds: those of the client (`timeoutMs`,
 * `retries`) and of the budget, charged here with what the attempts cost.
 */
export async function invoke(p: InvokeParts, job: Invocation): Promise<ResultRecord> {
  const { protocol, counters } = p;
  const { window, key, digests } = job;
  const questions = p.battery?.questions ?? SEMANTIC_QUESTIONS;
  try {
    await protocol.ledger.appendIntent(protocol.intent(key, digests, window));
  } catch (err) {
    counters.ledgerErrors++;
    p.faults.report('ledger', err);
    protocol.ledger.release(key);
    return protocol.unanswered(key, digests, window, { kind: 'ledger-failure', message: 'intent not recorded' }, null, emptyReceipt(), questions);
  }
  counters.calls++;
  const started = performance.now();
  const outcome = await p.client.complete(job.body, p.signal);
  const seconds = (performance.now() - started) / 1000;
  spent(p, job, outcome.receipt);
  let result: ResultRecord;
  if (!outcome.ok) {
    bump(counters.failures, outcome.failure.kind);
    // A configuration fault, not a bad answer: told (the log names the key and the alternatives) and counted by part.
    if (outcome.refusedFormat !== undefined) p.faults.report('answer-format', new ConfigError([outcome.failure.message], 'judge.client.answerFormat'));
    called(p, { seconds, outcome: outcome.failure.kind, receipt: outcome.receipt, failure: outcome.failure });
    result = protocol.unanswered(key, digests, window, outcome.failure, null, outcome.receipt, questions);
  } else {
    const read = (job.answerFormat ?? 'lines') === 'lines' ? parseAnswers : parseJsonAnswers;
    const parsed = read(outcome.content, outcome.logprobs, [...window.events.map((e) => e.id), UNRESOLVED_EVENT_ID], questions);
    called(p, {
      seconds,
      outcome: parsed.ok ? 'answered' : 'bad-answer',
      receipt: outcome.receipt,
      ...(parsed.ok ? {} : { failure: { message: parsed.reason } }),
    });
    if (!parsed.ok) {
      bump(counters.failures, 'bad-answer');
      result = protocol.unanswered(key, digests, window, { kind: 'bad-answer', message: parsed.reason }, outcome.servedModel, outcome.receipt, questions);
    } else {
      const answers =
        p.battery === undefined
          ? p.certifier.answers(parsed.answers, window, outcome.servedModel)
          : p.battery.decide(parsed.answers, window, outcome.servedModel);
      result = protocol.result(key, digests, window, null, answers, outcome.servedModel, outcome.receipt);
    }
  }
  try {
    await protocol.ledger.appendResult(result);
  } catch (err) {
    counters.ledgerErrors++;
    p.faults.report('ledger', err);
    result = protocol.unanswered(
      key,
      digests,
      window,
      { kind: 'ledger-failure', message: 'result not recorded' },
      result.servedModel,
      result.receipt,
      questions,
    );
  }
  return result;
}

/**
 * Count every physical attempt: its reported tokens and cost in the stats, and in the budget
 * its reported total or, when unknown, the ceiling. Retries also take calls-per-minute slots.
 */
function spent(p: InvokeParts, job: Invocation, receipt: Receipt): void {
  p.budget.spent(job.estimatedTokens, chargedTokens(receipt, job.ceilingTokens), receipt.attempts);
  countReceipt(p.counters, receipt);
}

function called(p: InvokeParts, call: JudgeCall): void {
  try {
    p.onCall?.(call);
  } catch (err) {
    p.faults.report('on-call', err);
  }
}
