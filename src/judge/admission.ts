import type { JudgeBudget } from './budget.ts';
import type { Ledger } from './ledger/ledger.ts';
import type { LedgerKey } from './ledger/record.ts';

export type Admission = { ok: true } | { ok: false; reason: string; detail: string };

/**
 * Whether a new judge call may be made, in this order: room in the ledger (`ledger-full`:
 * what replay needs is never deleted, so a full ledger refuses new calls), then the budget
 * (`calls-per-minute`, `tokens-per-day`, `queue-full`). The ledger is asked first so a refusal
 * there charges no budget; a budget refusal gives the ledger reservation back. A refused call
 * is deferred with the reason and detail returned, never dropped unrecorded.
 */
export function admitCall(
  ledger: Ledger,
  budget: JudgeBudget,
  call: { key: LedgerKey; intentBytes: number; estimatedTokens: number },
  queue: { queued: number; inFlight: number },
): Admission {
  if (!ledger.reserve(call.key, call.intentBytes)) {
    return { ok: false, reason: 'ledger-full', detail: `ledger: ${ledger.stats().liveBytes} bytes needed for replay, maxBytes ${ledger.bounds.maxBytes}` };
  }
  const admitted = budget.admit(call.estimatedTokens, queue.queued, queue.inFlight);
  if (admitted.ok) return admitted;
  ledger.release(call.key);
  return { ok: false, reason: admitted.reason, detail: `budget: ${admitted.reason}` };
}
