import type { Trajectory } from '../../assemble/trajectory.ts';
import { extractWindows, windowId } from '../../windows/extract.ts';
import type { WindowPolicy } from '../../windows/policy.ts';
import type { TraceWindow } from '../../windows/window.ts';
import { admitCall } from '../admission.ts';
import type { JudgeBudget } from '../budget.ts';
import type { Invocation } from '../invoke.ts';
import { bump } from '../judge-stats.ts';
import type { Ledger } from '../ledger/ledger.ts';
import { inputDigests } from '../ledger/protocol.ts';
import type { LedgerKey, ResultRecord } from '../ledger/record.ts';
import { attemptCeilingTokens, emptyReceipt } from '../receipts.ts';
import { buildLayerRequestBody } from './layer-prompt.ts';
import type { LayerPoint, LayerPoints } from './layer-points.ts';
import type { LayerSite } from './layer-sites.ts';
import type { VerifierReading } from './verifier.ts';
import type { JudgedLayer, LayerReader, PrimaryReading } from './walk.ts';
import type { WalkStats } from './walk-stats.ts';

export type LayerJobOutcome = { kind: 'judged'; result: ResultRecord } | { kind: 'not-judged'; fate: 'refused' | 'deferred'; reason: string };

/** A layer or verifier invocation in the judge's call queue (beside the trace-question windows). */
export interface LayerJob extends Invocation {
  point: LayerPoint;
  done(outcome: LayerJobOutcome): void;
}

/** What the reader borrows from `DecisionPoints`: the shared ledger, budget and queue. */
export interface AskParts {
  policy: WindowPolicy;
  policyDigest: string;
  ledger: Ledger;
  budget: JudgeBudget;
  stats: WalkStats;
  stopping(): boolean;
  queue: { readonly length: number; readonly inFlight: number; push(job: LayerJob): void; pump(): void };
}

type Asked = { kind: 'judged'; result: ResultRecord; replay: boolean } | { kind: 'not-judged'; fate: 'refused' | 'deferred'; reason: string };

/**
 * The walk's I/O for one trajectory: builds a site's window (the first kind within the
 * extraction caps; nothing is truncated), then asks through the same protocol as the trace
 * questions — ledger lookup (replay, conflict, intent without result), ledger room and budget
 * (`admitCall`), the call queue, intent → call → result. Every window not judged comes back with
 * its fate and reason, counted in `WalkStats`.
 */
export class TrajectoryLayerReader implements LayerReader {
  readonly #t: Trajectory;
  readonly #parts: AskParts;
  readonly #points: LayerPoints;

  constructor(t: Trajectory, parts: AskParts, points: LayerPoints) {
    this.#t = t;
    this.#parts = parts;
    this.#points = points;
  }

  async primary(layer: JudgedLayer, site: LayerSite): Promise<PrimaryReading> {
    const t = this.#t;
    const step = t.steps[site.anchorIndex]!;
    const anchor = `${step.traceId}/${step.id}`;
    const reads: PrimaryReading['reads'] = [];
    for (const kind of site.kinds) {
      const { windows, refusals } = extractWindows(
        t,
        [{ kind, anchorIndex: site.anchorIndex, triggers: [site.trigger] }],
        this.#parts.policy,
        this.#parts.policyDigest,
      );
      const window = windows[0];
      if (window === undefined) {
        const reason = refusals[0]?.reason ?? 'not-built';
        this.#count('refused', reason);
        reads.push({ window_id: windowId(t.key, t.revision, kind, anchor, this.#parts.policyDigest), kind, anchor, fate: 'refused', reason });
        continue;
      }
      const asked = await this.#ask(this.#points[layer].layer, window);
      if (asked.kind === 'not-judged' && asked.fate === 'refused') {
        // A request over its byte cap is a cap like the window's: try the next, narrower kind.
        reads.push({ window_id: window.id, kind, anchor, fate: 'refused', reason: asked.reason });
        continue;
      }
      if (asked.kind === 'not-judged') {
        reads.push({ window_id: window.id, kind, anchor, fate: asked.fate, reason: asked.reason });
        return { reads, notJudged: { fate: asked.fate, reason: asked.reason } };
      }
      const answer = asked.result.answers[0]?.option ?? null;
      reads.push({
        window_id: window.id,
        kind,
        anchor,
        fate: 'judged',
        ...(asked.result.failure === null ? {} : { reason: asked.result.failure.kind }),
        answer,
      });
      return { reads, judged: { window, result: asked.result, replay: asked.replay } };
    }
    return { reads, notJudged: { fate: 'refused', reason: reads.at(-1)?.reason ?? 'not-built' } };
  }

  async verify(layer: JudgedLayer, window: TraceWindow): Promise<VerifierReading> {
    const asked = await this.#ask(this.#points[layer].verifier, window);
    return asked.kind === 'judged' ? { kind: 'answered', result: asked.result, replay: asked.replay } : asked;
  }

  async #ask(point: LayerPoint, window: TraceWindow): Promise<Asked> {
    const p = this.#parts;
    const body = buildLayerRequestBody(point.role, window, point.questions, point.request);
    const bytes = Buffer.byteLength(JSON.stringify(body));
    if (bytes > p.policy.config.maxRequestBytes) return this.#not('refused', 'request-bytes');
    const digests = inputDigests(point.id, window);
    const key: LedgerKey = { point: point.point, runId: this.#t.key, invocationId: window.id };
    const known = point.protocol.lookup(key, digests);
    if (known.kind === 'duplicate') return this.#not('deferred', 'duplicate-in-flight');
    if (known.kind === 'replay') {
      p.stats.replays++;
      return { kind: 'judged', result: known.result, replay: true };
    }
    if (known.kind === 'unanswerable') {
      // Nothing new is paid for and nothing is appended: the key stays as the ledger has it.
      return { kind: 'judged', result: point.protocol.unanswered(key, digests, window, known.failure, null, emptyReceipt(), point.questions), replay: false };
    }
    if (p.stopping()) return this.#not('deferred', 'shutdown');
    const intentBytes = Buffer.byteLength(JSON.stringify(point.protocol.intent(key, digests, window))) + 1;
    const estimatedTokens = Math.ceil(bytes / 4) + point.request.maxOutputTokens;
    const admitted = admitCall(p.ledger, p.budget, { key, intentBytes, estimatedTokens }, { queued: p.queue.length, inFlight: p.queue.inFlight });
    if (!admitted.ok) return this.#not('deferred', admitted.reason);
    const outcome = await new Promise<LayerJobOutcome>((done) => {
      p.queue.push({ window, body, key, digests, estimatedTokens, ceilingTokens: attemptCeilingTokens(bytes, point.request.maxOutputTokens), point, done });
      p.queue.pump();
    });
    if (outcome.kind === 'not-judged') return this.#not(outcome.fate, outcome.reason);
    bump(p.stats.calls, point.role === 'verifier' ? 'verifier' : point.layer);
    return { kind: 'judged', result: outcome.result, replay: false };
  }

  #not(fate: 'refused' | 'deferred', reason: string): Asked {
    this.#count(fate, reason);
    return { kind: 'not-judged', fate, reason };
  }

  #count(fate: 'refused' | 'deferred', reason: string): void {
    bump(fate === 'refused' ? this.#parts.stats.refused : this.#parts.stats.deferred, reason);
  }
}
