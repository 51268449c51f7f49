import type { z } from 'zod';
import { ConfigError } from '../errors.ts';

/**
 * Validates `input` against `schema`, collecting every problem into one ConfigError whose
 * lines name the key and the bad value. The one place configuration errors are worded.
 *
 * @example parseSection(KafkaSinkConfigSchema, { brokers: ['127.0.0.1:9092'] }, 'kafka')
 */
export function parseSection<S extends z.ZodType>(schema: S, input: unknown, source: string, locate?: Locate): z.infer<S> {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((issue) => describeIssueAt(issue, locate)),
    source,
  );
}

/**
 * The file line of the key at a path, when the file format keeps positions (`RawConfig.locate`):
 * undefined when the key is not in the file, null when its value came from elsewhere (the
 * environment, a flag), so no line of the file may be named for it; `{ from }` names that
 * elsewhere (`env TRAJWATCH_OTLP_HTTP`, `--otlp-http`).
 */
export type Locate = (path: readonly PropertyKey[]) => number | undefined | null | { from: string };

/** `key.path: message (value: ...)`, or one `key: unknown key` per unrecognized key. */
export const describeIssue = (issue: z.core.$ZodIssue): string => describeIssueAt(issue, undefined);

/**
 * `describeIssue`, and with `locate` ` (line N)` after each whose key is in the file (a
 * missing key: its parent's line).
 */
export function describeIssueAt(issue: z.core.$ZodIssue, locate: Locate | undefined): string {
  const key = issue.path.length === 0 ? '(root)' : issue.path.join('.');
  const where = (path: readonly PropertyKey[]): { line: string; from: string } => {
    for (let p = path; p.length > 0; p = p.slice(0, -1)) {
      const found = locate?.(p);
      if (found === null) return { line: '', from: '' };
      if (typeof found === 'object') return { line: '', from: ` (from ${found.from})` };
      if (found !== undefined) return { line: ` (line ${found})`, from: '' };
    }
    return { line: '', from: '' };
  };
  if (issue.code === 'unrecognized_keys') {
    return issue.keys
      .map((k) => {
        const at = where([...issue.path, k]);
        return `${key === '(root)' ? k : `${key}.${k}`}${at.from}: unknown key${at.line}`;
      })
      .join('; ');
  }
  const input = (issue as { input?: unknown }).input;
  const shown = input === undefined ? 'missing' : JSON.stringify(input);
  const at = where(issue.path);
  return `${key}${at.from}: ${issue.message} (value: ${shown})${at.line}`;
}
