import type { z } from 'zod';
import { ConfigError } from '../errors.ts';

/**
 * Validates `input` against `schema`, collecting every problem into one ConfigError whose
 * lines name the key and the bad value. The one place configuration errors are worded.
 *
 * @example parseSection(KafkaSinkConfigSchema, { brokers: ['127.0.0.1:9092'] }, 'kafka')
 */
export function parseSection<S extends z.ZodType>(schema: S, input: unknown, source: string): z.infer<S> {
  const parsed = schema.safeParse(input, { reportInput: true });
  if (parsed.success) return parsed.data;
  throw new ConfigError(parsed.error.issues.map(describeIssue), source);
}

/** `key.path: message (value: ...)`, or one `key: unknown key` per unrecognized key. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const key = issue.path.length === 0 ? '(root)' : issue.path.join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => `${key === '(root)' ? k : `${key}.${k}`}: unknown key`).join('; ');
  }
  const input = (issue as { input?: unknown }).input;
  const shown = input === undefined ? 'missing' : JSON.stringify(input);
  return `${key}: ${issue.message} (value: ${shown})`;
}
