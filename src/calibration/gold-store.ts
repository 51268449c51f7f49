import { type FileHandle, open, readFile } from 'node:fs/promises';
import { StorageError } from '../errors.ts';
import { GoldRowSchema, type GoldRow } from './calibrate.ts';
import { LABEL_FORMAT, LabelInputSchema, LabelRowSchema, type LabelRow } from './label-record.ts';
import { labelQuestionById } from '../judge/question-catalog.ts';

/** What a gold file append needs to know of a window: that it was judged, and what the labeler saw. */
export interface LabelableWindow {
  windowId: string;
  /** The ledger's `digests.state` for the window (the content the judge saw). */
  stateDigest: string;
  /** Event ids of the window, in order; `unresolved` is always allowed too. */
  eventIds: readonly string[];
  /** The questions asked of it (a verifier's as the layer question it asks again): only these may be labeled there. */
  questionIds: readonly string[];
}

export type ObserveResult =
  | { kind: 'recorded'; row: LabelRow }
  /** A correction of this labeler's earlier, different label: appended with `supersedes`; the earlier line stays. */
  | { kind: 'corrected'; row: LabelRow; prior: GoldRow }
  /** The same labeler gave the same label (and support) before: nothing appended. */
  | { kind: 'duplicate'; row: LabelRow }
  | { kind: 'invalid'; issues: string[] }
  | { kind: 'unknown-window'; windowId: string }
  | { kind: 'unknown-question'; questionId: string }
  /** A question trajwatch asks, but not of this window: its label would be a missing prediction in calibration. */
  | { kind: 'not-asked'; questionId: string; asked: readonly string[] }
  | { kind: 'unknown-support'; support: string; allowed: string[] }
  /** This labeler already labelled the question on the window differently: refused, the first kept. */
  | { kind: 'conflict'; prior: GoldRow };

const key = (labeler: string, questionId: string, windowId: string) => `${labeler}\u0000${questionId}\u0000${windowId}`;

/**
 * The gold file `trajwatch label` appends to: JSONL, append-only, each line fsync'd before it
 * is acknowledged. Every line is validated at open — a malformed or torn line refuses the whole
 * file with its line number (never repaired, never skipped: what it held might be a label), so
 * nothing already recorded is lost or silently ignored. Rows written by hand (plain gold rows)
 * are kept and read; only this store's own rows carry a labeler.
 *
 * One labeler, one label per (question, window): a second, different label is a `conflict`
 * and is not written, unless it is sent as a `correction` — then it is appended with
 * `supersedes` (the earlier row's `labeledAt`) and replaces it wherever gold is read
 * (`goldInForce`); the same label again is a `duplicate` and is not written either. Labels
 * by different labelers may differ: `trajwatch calibrate` refuses such pairs as conflicting gold
 * and lists them. One process appends at a time (the label server); a second writer is not
 * detected.
 */
export class GoldStore {
  readonly path: string;
  readonly #rows: GoldRow[];
  readonly #byLabeler = new Map<string, GoldRow>();
  #chain: Promise<unknown> = Promise.resolve();
  readonly #now: () => Date;

  private constructor(path: string, rows: GoldRow[], now: () => Date) {
    this.path = path;
    this.#rows = rows;
    this.#now = now;
    for (const r of rows) this.#byLabeler.set(key(r.labeler ?? r.source, r.questionId, r.windowId), r);
  }

  static async open(path: string, options: { now?: () => Date } = {}): Promise<GoldStore> {
    return new GoldStore(path, await readGold(path), options.now ?? (() => new Date()));
  }

  rows(): readonly GoldRow[] {
    return this.#rows;
  }

  /** This labeler's label for the question on the window, if any. */
  labelOf(labeler: string, questionId: string, windowId: string): GoldRow | undefined {
    return this.#byLabeler.get(key(labeler, questionId, windowId));
  }

  /**
   * Records an independently observed label for one question of a judged window (the seed's
   * `observe()`): validated, then appended and fsync'd. Never throws for bad input — the result
   * says what was wrong and nothing is appended; a failed write throws (StorageError) and
   * nothing is counted as recorded.
   */
  observe(input: unknown, windowOf: (windowId: string) => LabelableWindow | undefined): Promise<ObserveResult> {
    const run = this.#chain.then(() => this.#observe(input, windowOf));
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #observe(input: unknown, windowOf: (windowId: string) => LabelableWindow | undefined): Promise<ObserveResult> {
    const parsed = LabelInputSchema.safeParse(input);
    if (!parsed.success) return { kind: 'invalid', issues: parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`) };
    const l = parsed.data;
    if (labelQuestionById(l.questionId) === undefined) return { kind: 'unknown-question', questionId: l.questionId };
    const w = windowOf(l.windowId);
    if (w === undefined) return { kind: 'unknown-window', windowId: l.windowId };
    if (!w.questionIds.includes(l.questionId)) return { kind: 'not-asked', questionId: l.questionId, asked: w.questionIds };
    const allowed = [...w.eventIds, 'unresolved'];
    if (l.support !== null && !allowed.includes(l.support)) return { kind: 'unknown-support', support: l.support, allowed };
    const prior = this.labelOf(l.labeler, l.questionId, l.windowId);
    if (prior !== undefined) {
      const same =
        prior.label === l.label && (prior.support ?? null) === l.support && (prior.windowDigest === undefined || prior.windowDigest === w.stateDigest);
      if (same) return { kind: 'duplicate', row: prior as LabelRow };
      if (l.correction !== true) return { kind: 'conflict', prior };
    }
    const now = this.#now().toISOString();
    const row: LabelRow = LabelRowSchema.parse({
      questionId: l.questionId,
      windowId: l.windowId,
      label: l.label,
      source: l.labeler,
      format: LABEL_FORMAT,
      labeler: l.labeler,
      labeledAt: now,
      support: l.support,
      windowDigest: w.stateDigest,
      // A hand-written row has no time of its own: the correction names it by its label.
      ...(prior === undefined ? {} : { supersedes: prior.labeledAt ?? `hand-written:${prior.label}` }),
    });
    await appendLine(this.path, JSON.stringify(row));
    this.#rows.push(row);
    this.#byLabeler.set(key(l.labeler, l.questionId, l.windowId), row);
    return prior === undefined ? { kind: 'recorded', row } : { kind: 'corrected', row, prior };
  }
}

/** Every row of a gold file; a missing file is empty. Refuses the file at its first bad line. */
export async function readGold(path: string): Promise<GoldRow[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new StorageError(`gold file ${path} could not be read`, { cause: err });
  }
  const bad = (line: number, why: string) =>
    new StorageError(
      `gold file ${path} is malformed at line ${line}: ${why}. Nothing was changed; fix or remove that line deliberately (it may hold a label)`,
      { context: { path, line } },
    );
  if (text !== '' && !text.endsWith('\n')) throw bad(text.split('\n').length, 'the last line has no newline (a torn write)');
  const rows: GoldRow[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      throw bad(i + 1, 'not JSON');
    }
    const written = (json as { format?: unknown } | null)?.format === LABEL_FORMAT;
    const r = (written ? LabelRowSchema : GoldRowSchema).safeParse(json);
    if (!r.success) throw bad(i + 1, r.error.issues.map((x) => `${x.path.join('.') || '(row)'}: ${x.message}`).join('; '));
    rows.push(r.data);
  }
  return rows;
}

async function appendLine(path: string, line: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(path, 'a');
    await fh.write(line + '\n');
    await fh.sync();
  } catch (err) {
    throw new StorageError(`gold file ${path}: the label could not be written durably`, { cause: err });
  } finally {
    await fh?.close();
  }
}
