import { stat } from 'node:fs/promises';
import { StorageError } from '../../errors.ts';
import { Backoff } from '../../storage/backoff.ts';
import type { CalibrationReport } from '../calibrate.ts';
import { calibrate } from '../calibrate.ts';
import type { GoldStore, LabelableWindow } from '../gold-store.ts';
import { readStoredWindow, storedWindowIds, type StoredWindow } from '../../judge/label-windows.ts';
import { readLedger } from '../../judge/ledger/ledger.ts';
import type { AnswerRecord, IntentRecord, LedgerRecord, ResultRecord } from '../../judge/ledger/record.ts';
import { goldQuestionId, isRecordOnly, labelQuestionById, reportOrder } from '../../judge/question-catalog.ts';
import { OPTION_MEANINGS, type SemanticQuestion } from '../../judge/questions.ts';

/** Where `trajwatch label` reads and writes, all under one data directory. */
export interface LabelPaths {
  ledger: string;
  windows: string;
}

/** A judged window: its intent, and the result of every decision point that judged it (trace questions, layers, verifiers). */
interface Judged {
  intent: IntentRecord;
  results: ResultRecord[];
}

/**
 * The questions a labeler is asked of a judged window: those its decision points asked, a
 * verifier's as the layer question it asks again (one label scores both), in report order.
 */
function questionsOf(j: Judged): SemanticQuestion[] {
  const ids = new Set(j.results.flatMap((r) => r.answers.map((a) => goldQuestionId(a.questionId))));
  return [...ids].flatMap((id) => labelQuestionById(id) ?? []).sort((a, b) => reportOrder(a.id) - reportOrder(b.id));
}

/** The answer (and its result) that the labeler's question is compared with: the question's own, never a verifier's. */
function answerOf(j: Judged, questionId: string): { a: AnswerRecord | undefined; r: ResultRecord } {
  for (const r of j.results) {
    const a = r.answers.find((x) => x.questionId === questionId);
    if (a !== undefined) return { a, r };
  }
  return { a: undefined, r: j.results[0]! };
}

/** A judged window in the list a labeler picks from. */
export interface WindowSummary {
  windowId: string;
  kind: string;
  trajectoryKey: string;
  anchor: string;
  storedAt: string;
  events: number;
  /** Questions this labeler has labeled on it, of `questions`. */
  labeled: number;
  questions: number;
  /** A call on it failed: the judge gave no answer there (it still counts in calibration). */
  failed: boolean;
}

export interface WindowList {
  windows: WindowSummary[];
  /** Judged windows the store does not hold (judged before it existed, or evicted by its retention). */
  notStored: number;
}

/**
 * The label server's view of a data directory: the ledger (read, never written — a running
 * `serve` owns it), the stored windows, and the gold store. The ledger is re-read when its file
 * changes, so a running `serve`'s new windows appear.
 */
export class LabelData {
  readonly #paths: LabelPaths;
  readonly gold: GoldStore;
  readonly minKappa: number;
  #cache: { stamp: string; records: LedgerRecord[]; judged: Map<string, Judged> } | undefined;

  constructor(paths: LabelPaths, gold: GoldStore, minKappa: number) {
    this.#paths = paths;
    this.gold = gold;
    this.minKappa = minKappa;
  }

  async #ledger(): Promise<{ records: LedgerRecord[]; judged: Map<string, Judged> }> {
    const s = await stat(this.#paths.ledger).catch(() => null);
    const stamp = s === null ? 'none' : `${s.size}:${s.mtimeMs}`;
    if (this.#cache?.stamp === stamp) return this.#cache;
    const records = s === null ? [] : await readLiveLedger(this.#paths.ledger);
    const intents = new Map<string, IntentRecord>();
    const judged = new Map<string, Judged>();
    for (const r of records) {
      if (r.type === 'intent') intents.set(r.window.windowId, r);
      else if (r.type === 'result') {
        const intent = intents.get(r.key.invocationId);
        if (intent === undefined) continue;
        const j = judged.get(r.key.invocationId) ?? { intent, results: [] };
        judged.set(r.key.invocationId, j);
        j.results.push(r);
      }
    }
    this.#cache = { stamp, records, judged };
    return this.#cache;
  }

  async list(labeler: string | null): Promise<WindowList> {
    const { judged } = await this.#ledger();
    const ids = new Set(await storedWindowIds(this.#paths.windows));
    const windows: WindowSummary[] = [];
    for (const id of ids) {
      const j = judged.get(id);
      if (j === undefined) continue;
      let w: StoredWindow | null;
      try {
        w = await readStoredWindow(this.#paths.windows, id, j.intent.digests.state);
      } catch {
        w = null; // tampered or unreadable: opening it says why
      }
      const questions = questionsOf(j);
      const labeled = labeler === null ? 0 : questions.filter((q) => this.gold.labelOf(labeler, q.id, id) !== undefined).length;
      windows.push({
        windowId: id,
        kind: j.intent.window.kind,
        trajectoryKey: j.intent.key.runId,
        anchor: w?.anchor ?? '',
        storedAt: w?.storedAt ?? '',
        events: j.intent.window.eventMap.length,
        labeled,
        questions: questions.length,
        failed: j.results.some((r) => r.failure !== null),
      });
    }
    windows.sort((a, b) => (a.storedAt < b.storedAt ? -1 : a.storedAt > b.storedAt ? 1 : a.windowId < b.windowId ? -1 : 1));
    return { windows, notStored: [...judged.keys()].filter((id) => !ids.has(id)).length };
  }

  /**
   * The window as the judge saw it, its questions, this labeler's labels, and the judge's
   * answer to each question only once this labeler has labeled it (blind) unless `reveal`.
   * Null when the window is not judged or not stored; throws StorageError when tampered.
   */
  async window(windowId: string, labeler: string | null, reveal: boolean) {
    const { judged } = await this.#ledger();
    const j = judged.get(windowId);
    if (j === undefined) return null;
    const w = await readStoredWindow(this.#paths.windows, windowId, j.intent.digests.state);
    if (w === null) return null;
    return {
      windowId,
      kind: w.kind,
      trajectoryKey: w.trajectoryKey,
      anchor: w.anchor,
      triggers: w.triggers,
      limitations: w.limitations,
      redactions: w.redactions,
      events: w.events.map((e) => ({ id: e.id, content: e.content })),
      failure: j.results.find((r) => r.failure !== null)?.failure?.kind ?? null,
      questions: questionsOf(j).map((q) => {
        const mine = labeler === null ? undefined : this.gold.labelOf(labeler, q.id, windowId);
        const { a, r } = answerOf(j, q.id);
        const show = reveal || mine !== undefined;
        return {
          id: q.id,
          version: q.version,
          /** A companion classification (L4's gap kind): labeled and scored, never certified. */
          recordOnly: isRecordOnly(q.id),
          text: q.text,
          options: q.options.map((o) => ({ value: o, meaning: OPTION_MEANINGS[o] })),
          label:
            mine === undefined
              ? null
              : { label: mine.label, support: mine.support ?? null, labeledAt: mine.labeledAt ?? null, corrected: mine.supersedes !== undefined },
          judge: show ? judgeAnswer(a, r) : 'hidden',
        };
      }),
    };
  }

  /** What the gold store needs to check a label's window (judged, stored, untampered). */
  async labelable(windowId: string): Promise<LabelableWindow | undefined> {
    const { judged } = await this.#ledger();
    const j = judged.get(windowId);
    if (j === undefined) return undefined;
    const w = await readStoredWindow(this.#paths.windows, windowId, j.intent.digests.state);
    if (w === null) return undefined;
    return { windowId, stateDigest: j.intent.digests.state, eventIds: w.events.map((e) => e.id), questionIds: questionsOf(j).map((q) => q.id) };
  }

  async judgeAnswerOf(windowId: string, questionId: string) {
    const j = (await this.#ledger()).judged.get(windowId);
    if (j === undefined) return null;
    const { a, r } = answerOf(j, questionId);
    return judgeAnswer(a, r);
  }

  /** The disagreement review: the same `calibrate()` as `trajwatch calibrate`, over the gold so far. */
  async review(): Promise<CalibrationReport> {
    const { records } = await this.#ledger();
    return calibrate(this.gold.rows(), records, this.minKappa);
  }
}

/**
 * A running `serve` may be appending a line while it is read, and a ledger with a torn last line
 * is refused as corrupt: read again a few times before believing it (a real tear stays torn).
 */
async function readLiveLedger(path: string): Promise<LedgerRecord[]> {
  const backoff = new Backoff(50, 200);
  for (let attempt = 0; ; attempt++) {
    try {
      return await readLedger(path);
    } catch (err) {
      if (attempt >= 4 || !(err instanceof StorageError)) throw err;
      await new Promise((r) => setTimeout(r, backoff.next()));
    }
  }
}

function judgeAnswer(a: AnswerRecord | undefined, r: ResultRecord) {
  if (a === undefined) return { option: null, probabilities: null, support: null, failure: r.failure?.kind ?? 'not-asked', recommendation: null };
  return { option: a.option, probabilities: a.probabilities, support: a.support, failure: r.failure?.kind ?? null, recommendation: a.recommendation };
}
