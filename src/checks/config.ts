import { parseSection } from '../config/parse-section.ts';
import { z } from 'zod';

/**
 * Configuration of the inline checks: which tools are outbound actions, which are gates, how a
 * tool result is recognized as an error payload, and a few bounds. Every pattern is a
 * case-insensitive regular expression; see docs/checks.md for how tool names are matched.
 */

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'i');
    return true;
  } catch {
    return false;
  }
}

const patternList = z.array(z.string().min(1).refine(compiles, { message: 'is not a valid regular expression' }));

const toolClassSchema = (include: string[], exclude: string[]) =>
  z
    .strictObject({
      /** A tool belongs to the class when one of these matches its name... */
      include: patternList.default(include),
      /** ...and none of these does. */
      exclude: patternList.default(exclude),
    })
    .prefault({});

/** Irreversible or externally visible actions: sending, paying, deleting, deploying... */
const DEFAULT_OUTBOUND = [
  String.raw`\b(send|post|reply|publish|release|deploy|merge|push|transfer|wire|pay|payment|charge|refund|purchase|buy|delete|remove|destroy|drop|purge|revoke|email|mail|sms|tweet|submit)\b`,
];

/** Reads named after what they read (`get_post`, `search_email`) are not outbound. */
const DEFAULT_OUTBOUND_EXCLUDE = [String.raw`^(get|list|read|search|fetch|find|query|lookup|view|show|describe|count|draft)\b`];

/** Steps that guard an outbound action: approval, confirmation, review, validation... */
const DEFAULT_GATES = [
  String.raw`\b(approve|approval|approved|approver|confirm|confirmation|review|reviewer|validate|validation|validator|verify|verification|verifier|check|checker|authorize|authorization|consent|permission)\b`,
];

/** Result texts that are error payloads even when the span status says ok. */
const DEFAULT_ERROR_RESULT_PATTERNS = [
  // `Error: ...`, `ValueError: ...`, `requests.exceptions.ConnectionError: ...`
  String.raw`^\s*([a-z_][\w.]*)?(error|exception)\s*:`,
  String.raw`^\s*traceback \(most recent call last\)`,
];

export const checksConfigSchema = z
  .strictObject({
    outbound: toolClassSchema(DEFAULT_OUTBOUND, DEFAULT_OUTBOUND_EXCLUDE),
    gates: toolClassSchema(DEFAULT_GATES, []),
    errorPayload: z
      .strictObject({
        /** Tested against the start of a tool result (first `scanChars` characters). */
        resultPatterns: patternList.default(DEFAULT_ERROR_RESULT_PATTERNS),
        /**
         * Top-level keys of a JSON-object result that mark an error when their value is
         * truthy: `{"error": "..."}`, MCP's `{"isError": true, ...}`.
         */
        jsonErrorKeys: z.array(z.string().min(1)).default(['error', 'isError']),
        /** Bound on how much of a result the patterns and the JSON probe read. */
        scanChars: z.int().min(16).max(1_048_576).default(4096),
      })
      .prefault({}),
    options: z
      .strictObject({
        /** An error text shorter than this is too common to call its reappearance passthrough. */
        passthroughMinChars: z.int().min(4).max(4096).default(24),
        /** The distinctive text searched for is the error's first line, cut to this length. */
        passthroughMaxChars: z.int().min(8).max(4096).default(120),
        /**
         * Step conventions whose tool arguments are checked as JSON even where the
         * instrumentation does not declare them JSON. Arguments declared JSON always are, and
         * arguments declared text (OpenInference without a JSON mime type) never are.
         */
        jsonArgsConventions: z.array(z.string().min(1)).default([]),
        /** Longest excerpt of captured text quoted in a hit's detail. */
        detailExcerptChars: z.int().min(16).max(1024).default(120),
      })
      .prefault({}),
  })
  .superRefine((cfg, ctx) => {
    if (cfg.options.passthroughMaxChars < cfg.options.passthroughMinChars) {
      ctx.addIssue({
        code: 'custom',
        path: ['options', 'passthroughMaxChars'],
        message: `must be >= options.passthroughMinChars (${cfg.options.passthroughMinChars})`,
      });
    }
  });

/** The validated checks configuration (all defaults filled in). */
export type ChecksConfig = z.infer<typeof checksConfigSchema>;

/** What a user may write: every key optional, unknown keys rejected. */
export type ChecksConfigInput = z.input<typeof checksConfigSchema>;

/** The defaults, as documented in docs/checks.md. */
export const defaultChecksConfig: ChecksConfig = checksConfigSchema.parse({});

/**
 * Validate a checks configuration, collecting every problem.
 *
 * @throws ConfigError naming each bad key and value.
 * @example parseChecksConfig({ outbound: { include: ['^wire_funds$'] } }, 'trajwatch.yaml')
 */
export function parseChecksConfig(input: unknown, source: string): ChecksConfig {
  return parseSection(checksConfigSchema, input ?? {}, source);
}
