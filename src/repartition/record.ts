import { z } from 'zod';
import type { CaptureConflict, IncompleteReason, Trajectory } from '../assemble/trajectory.ts';
import type { AttrValue } from '../ingest/span.ts';
import { STEP_KINDS, type Step } from '../normalize/step.ts';

/**
 * The repartition record: one closed trace of stage 1 (assembled by trace on the partition the
 * Collector wrote) as stage 2 (assembled by session) reads it from the internal topic, keyed by
 * session id. Versioned and validated on both sides: stage 2 refuses (dead-letters) what does
 * not parse, never guesses. A record over the topic's largest message goes as fragments of it
 * ({@link FragmentHeaderSchema}). Nothing is cut: every step goes whole, and what the capture lost
 * (incomplete reasons, conflicts, refused spans, the stage-1 revision) goes with it, so the
 * session is incomplete whenever one of its traces was.
 */
export const REPARTITION_RECORD_VERSION = 1;

/** Every {@link IncompleteReason}; the type check below keeps the two in step. */
const INCOMPLETE_REASONS = [
  'root-not-seen',
  'orphan-parents',
  'span-limit',
  'byte-limit',
  'refused-spans',
  'idle-timeout',
  'end-of-input',
  'shutdown',
  'previous-revision-not-retained',
  'previous-revision-unknown',
  'partitioned-session',
  'session-conflict',
  'content-without-span',
  'repartition-refused',
  'repartition-fragment-lost',
] as const satisfies readonly IncompleteReason[];
type Missing = Exclude<IncompleteReason, (typeof INCOMPLETE_REASONS)[number]>;
const everyReasonListed: Missing extends never ? true : Missing = true;
void everyReasonListed;

const AttrValueSchema: z.ZodType<AttrValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(AttrValueSchema), z.record(z.string(), AttrValueSchema)]),
);
const AttributesSchema = z.record(z.string(), AttrValueSchema);
/** Nanosecond times travel as decimal strings (JSON has no 64-bit integers). */
const NanosSchema = z
  .string()
  .regex(/^\d{1,20}$/)
  .transform((s) => BigInt(s));

const ToolArgsSchema = z.strictObject({
  raw: z.string(),
  parsed: z.unknown().optional(),
  recorded: z.enum(['kwargs', 'wrapped']).optional(),
  wrappedAt: z.string().optional(),
  digest: z.string(),
  declared: z.enum(['json', 'text']).optional(),
  source: z.literal('request').optional(),
  captured: z.string().optional(),
  capturedAs: z.literal('python-literal').optional(),
});

const StepSchema = z.strictObject({
  id: z.string().min(1),
  traceId: z.string().min(1),
  parentId: z.string().optional(),
  kind: z.enum(STEP_KINDS as [Step['kind'], ...Step['kind'][]]),
  name: z.string(),
  convention: z.string(),
  toolName: z.string().optional(),
  toolCallId: z.string().optional(),
  toolCallIdSource: z.literal('request').optional(),
  args: ToolArgsSchema.optional(),
  result: z.string().optional(),
  input: z.string().optional(),
  error: z
    .strictObject({
      source: z.enum(['status', 'exception', 'error.type', 'result']),
      type: z.string().optional(),
      message: z.string().optional(),
    })
    .optional(),
  model: z.string().optional(),
  agentName: z.string().optional(),
  sessionId: z.string().optional(),
  toolSchemas: z.record(z.string(), z.unknown()).optional(),
  requestedToolCalls: z.array(z.strictObject({ id: z.string().optional(), name: z.string().optional(), arguments: AttrValueSchema.optional() })).optional(),
  unreadConvention: z.string().optional(),
  startTimeUnixNano: NanosSchema,
  endTimeUnixNano: NanosSchema,
  statusCode: z.union([z.literal(0), z.literal(1), z.literal(2)]),
  service: z.string().optional(),
  attributes: AttributesSchema,
  resource: AttributesSchema,
  eventNames: z.array(z.string()),
  encodedBytes: z.number().int().min(0),
});

const ConflictSchema = z.strictObject({
  traceId: z.string(),
  spanId: z.string(),
  keptDigest: z.string(),
  refusedDigest: z.string(),
});

/** What stage 1 knew of the trace's capture: stage 2 folds it into the session. */
const CaptureSchema = z.strictObject({
  /** The stage-1 revision: above 1, spans arrived after the trace first closed (late). */
  revision: z.number().int().min(1),
  /** Why the trace is incomplete, `partitioned-session` excluded (it only described stage 1's keying). */
  incompleteReasons: z.array(z.enum(INCOMPLETE_REASONS)),
  conflicts: z.array(ConflictSchema),
  /** Spans refused for the trace (invalid, over a bound): counted, never silently lost. */
  refusedSpans: z.number().int().min(0),
  closedBy: z.string(),
});

const TraceRecordSchema = z.strictObject({
  v: z.literal(REPARTITION_RECORD_VERSION),
  kind: z.literal('trace'),
  sessionId: z.string().min(1),
  traceId: z.string().min(1),
  capture: CaptureSchema,
  steps: z.array(StepSchema),
});

/**
 * Sent instead of a trace record the broker refused as too large (its limit below the one read
 * at start): the session learns that a trace of it is missing (`repartition-refused`), so no
 * absence is claimed.
 */
const RefusedRecordSchema = z.strictObject({
  v: z.literal(REPARTITION_RECORD_VERSION),
  kind: z.literal('refused'),
  sessionId: z.string().min(1),
  traceId: z.string().min(1),
  reason: z.literal('record-too-large'),
  /** The encoded size of the trace record that was refused, and the limit. */
  bytes: z.number().int().min(0),
  maxBytes: z.number().int().min(0),
  steps: z.number().int().min(0),
  capture: CaptureSchema,
});

export const RepartitionRecordSchema = z.discriminatedUnion('kind', [TraceRecordSchema, RefusedRecordSchema]);

/**
 * The header of one fragment of a trace record too large for one message (`fragments.ts`): the
 * header is a JSON line, and the bytes after its newline are the `index`-th slice of the whole
 * record, whose length and sha256 (`digest`, hex) it names. A whole record never holds a raw
 * newline (JSON escapes it), so the newline tells the two apart.
 */
export const FragmentHeaderSchema = z.strictObject({
  v: z.literal(REPARTITION_RECORD_VERSION),
  kind: z.literal('fragment'),
  sessionId: z.string().min(1),
  traceId: z.string().min(1),
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  /** The whole record's bytes. */
  bytes: z.number().int().min(1),
  index: z.number().int().min(0),
  count: z.number().int().min(2),
});
export type FragmentHeader = z.output<typeof FragmentHeaderSchema>;

/** A fragment as read: its header and its slice of the whole record. */
export interface RepartitionFragment extends FragmentHeader {
  chunk: Buffer;
}

/**
 * What `StepSchema` gives back: a {@link Step} of a closed trajectory, whose texts are strings
 * (`withTexts`; a `LongText` is written as its string), checked below at compile time.
 */
type DecodedStep = z.output<typeof StepSchema>;
type ClosedStep = Omit<Step, 'input' | 'result'> & { input?: string; result?: string };
const stepsMatch: DecodedStep extends ClosedStep ? (ClosedStep extends DecodedStep ? true : false) : false = true;
void stepsMatch;

export type RepartitionRecord = z.output<typeof RepartitionRecordSchema>;
export type TraceCapture = z.output<typeof CaptureSchema>;

/**
 * The session a closed stage-1 trace belongs to: the smallest session id its steps name
 * (code-unit order, the rule the session assembler applies to a trace naming two), or undefined
 * when none does (such a trace skips the repartition and is analyzed where it closed).
 */
export function sessionOf(steps: readonly Step[]): string | undefined {
  let session: string | undefined;
  for (const s of steps) if (s.sessionId !== undefined && (session === undefined || s.sessionId < session)) session = s.sessionId;
  return session;
}

/** The capture state of a closed stage-1 trace, as forwarded. */
export function captureOf(t: Trajectory): TraceCapture {
  return {
    revision: t.revision,
    incompleteReasons: t.incompleteReasons.filter((r) => r !== 'partitioned-session'),
    conflicts: t.conflicts.map((c: CaptureConflict) => ({ ...c })),
    refusedSpans: t.refusedSpans,
    closedBy: t.closedBy,
  };
}

/** The record for one closed trace: its captured steps (before any derivation) and its capture state. */
export function encodeTraceRecord(sessionId: string, traceId: string, steps: readonly Step[], capture: TraceCapture): Buffer {
  const record = { v: REPARTITION_RECORD_VERSION, kind: 'trace', sessionId, traceId, capture, steps };
  return Buffer.from(JSON.stringify(record, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
}

/** The refusal sent instead of a trace record of `bytes` over `maxBytes`. */
export function encodeRefusedRecord(sessionId: string, traceId: string, steps: number, capture: TraceCapture, bytes: number, maxBytes: number): Buffer {
  const record = { v: REPARTITION_RECORD_VERSION, kind: 'refused', sessionId, traceId, reason: 'record-too-large', bytes, maxBytes, steps, capture };
  return Buffer.from(JSON.stringify(record));
}

/** Parses a record of the internal topic (a whole one or a fragment); a message naming what is wrong when it is not one. */
export function decodeRepartitionRecord(value: Buffer | null): RepartitionRecord | RepartitionFragment | { error: string } {
  if (value === null) return { error: 'record has no value' };
  const newline = value.indexOf(0x0a);
  if (newline >= 0) return decodeFragment(value, newline);
  let json: unknown;
  try {
    json = JSON.parse(value.toString('utf8'));
  } catch (err) {
    return { error: `not JSON: ${(err as Error).message}` };
  }
  const parsed = RepartitionRecordSchema.safeParse(json);
  if (!parsed.success) return { error: z.prettifyError(parsed.error).slice(0, 1_000) };
  return parsed.data as RepartitionRecord;
}

function decodeFragment(value: Buffer, newline: number): RepartitionFragment | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(value.subarray(0, newline).toString('utf8'));
  } catch (err) {
    return { error: `fragment header not JSON: ${(err as Error).message}` };
  }
  const parsed = FragmentHeaderSchema.safeParse(json);
  if (!parsed.success) return { error: z.prettifyError(parsed.error).slice(0, 1_000) };
  const header = parsed.data;
  const chunk = value.subarray(newline + 1);
  if (header.index >= header.count) return { error: `fragment index ${header.index} of ${header.count}` };
  if (chunk.length === 0 || chunk.length > header.bytes) return { error: `fragment of ${chunk.length} bytes for a record of ${header.bytes}` };
  return { ...header, chunk };
}
