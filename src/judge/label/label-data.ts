import { stat } from 'node:fs/promises';
import { StorageError } from '../../errors.ts';
import type { CalibrationReport } from '../calibrate.ts';
import { calibrate } from '../calibrate.ts';
import type { GoldStore, LabelableWindow } from '../gold-store.ts';
import { readStoredWindow, storedWindowIds, type StoredWindow } from '../label-windows.ts';
import { readLedger } from '../ledger.ts';
import type { AnswerRecord, IntentRecord, LedgerRecord, ResultRecord } from '../ledger-record.ts';
import { OPTION_MEANINGS, SEMANTIC_QUESTIONS } from '../questions.ts';

/** Where `trajwatch label` reads and writes, all under one data directory. */
export interface LabelPaths {
  ledger: string;
  windows: string;
}

interface Judged {
  intent: IntentRecord;
  result: ResultRecord;
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
  /** The call failed: the judge gave no answer (it still counts in calibration). */
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
        if (intent !== undefined) judged.set(r.key.invocationId, { intent, result: r });
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
      const labeled = labeler === null ? 0 : SEMANTIC_QUESTIONS.filter((q) => this.gold.labelOf(labeler, q.id, id) !== undefined).length;
      windows.push({
        windowId: id,
        kind: j.intent.window.kind,
        trajectoryKey: j.intent.key.runId,
        anchor: w?.anchor ?? '',
        storedAt: w?.storedAt ?? '',
        events: j.intent.window.eventMap.length,
        labeled,
        questions: SEMANTIC_QUESTIONS.length,
        failed: j.result.failure !== null,
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
    const answers = new Map<string, AnswerRecord>(j.result.answers.map((a) => [a.questionId, a]));
    return {
      windowId,
      kind: w.kind,
      trajectoryKey: w.trajectoryKey,
      anchor: w.anchor,
      triggers: w.triggers,
      limitations: w.limitations,
      redactions: w.redactions,
      events: w.events.map((e) => ({ id: e.id, content: e.content })),
      failure: j.result.failure === null ? null : j.result.failure.kind,
      questions: SEMANTIC_QUESTIONS.map((q) => {
        const mine = labeler === null ? undefined : this.gold.labelOf(labeler, q.id, windowId);
        const a = answers.get(q.id);
        const show = reveal || mine !== undefined;
        return {
          id: q.id,
          version: q.version,
          text: q.text,
          options: q.options.map((o) => ({ value: o, meaning: OPTION_MEANINGS[o] })),
          label: mine === undefined ? null : { label: mine.label, support: mine.support ?? null, labeledAt: mine.labeledAt ?? null },
          judge: show ? judgeAnswer(a, j.result) : 'hidden',
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
    return { windowId, stateDigest: j.intent.digests.state, eventIds: w.events.map((e) => e.id) };
  }

  async judgeAnswerOf(windowId: string, questionId: string) {
    const j = (await this.#ledger()).judged.get(windowId);
    return j === undefined ? null : judgeAnswer(j.result.answers.find((a) => a.questionId === questionId), j.result);
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
  for (let attempt = 0; ; attempt++) {
    try {
      return await readLedger(path);
    } catch (err) {
      if (attempt >= 4 || !(err instanceof StorageError)) throw err;
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  }
}

function judgeAnswer(a: AnswerRecord | undefined, r: ResultRecord) {
  if (a === undefined) return { option: null, probabilities: null, support: null, failure: r.failure?.kind ?? 'not-asked', recommendation: null };
  return { option: a.option, probabilities: a.probabilities, support: a.support, failure: r.failure?.kind ?? null, recommendation: a.recommendation };
}
