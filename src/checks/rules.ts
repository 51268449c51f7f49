import type { ChecksConfig } from './config.ts';

/** A tool class with its patterns compiled once. */
export interface ToolClassRules {
  include: RegExp[];
  exclude: RegExp[];
  /** Memo of `toolClassMatch` by tool name; tool names repeat across every trajectory. */
  memo: Map<string, number | undefined>;
}

/** Bound on each class's memo; past it the memo starts over (names come from telemetry). */
const MAX_MEMOIZED_NAMES = 4096;

/** The checks configuration with every pattern compiled: what the check functions read. */
export interface CompiledRules {
  outbound: ToolClassRules;
  gates: ToolClassRules;
  errorResultPatterns: RegExp[];
  jsonErrorKeys: string[];
  scanChars: number;
}

// Compiling is the only costly part of a config; a validated config is immutable in practice,
// so caching by identity keeps every check a pure function of (trajectory, config).
const cache = new WeakMap<ChecksConfig, CompiledRules>();

const compile = (patterns: readonly string[]): RegExp[] => patterns.map((p) => new RegExp(p, 'i'));

/** The compiled form of a validated config (cached per config object). */
export function compiledRules(cfg: ChecksConfig): CompiledRules {
  let rules = cache.get(cfg);
  if (rules === undefined) {
    rules = {
      outbound: { include: compile(cfg.outbound.include), exclude: compile(cfg.outbound.exclude), memo: new Map() },
      gates: { include: compile(cfg.gates.include), exclude: compile(cfg.gates.exclude), memo: new Map() },
      errorResultPatterns: compile(cfg.errorPayload.resultPatterns),
      jsonErrorKeys: [...cfg.errorPayload.jsonErrorKeys],
      scanChars: cfg.errorPayload.scanChars,
    };
    cache.set(cfg, rules);
  }
  return rules;
}

/**
 * A tool name as lower-case words: `sendEmail`, `send_email`, `send-email` and `mail.send`
 * become `send email` / `mail send`, so `\bsend\b` finds the verb in every naming style.
 */
export function toolNameWords(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[^A-Za-z0-9]+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * Where a tool name first matches a class, or `undefined` when it is not in the class (no
 * include pattern matches the raw name or its word form, or an exclude pattern does). The
 * position lets a name in two classes go to the one it names first: `approve_email` is a
 * gate, `send_for_review` is outbound.
 */
export function toolClassMatch(name: string, rules: ToolClassRules): number | undefined {
  if (rules.memo.has(name)) return rules.memo.get(name);
  if (rules.memo.size >= MAX_MEMOIZED_NAMES) rules.memo.clear();
  const position = matchToolClass(name, rules);
  rules.memo.set(name, position);
  return position;
}

function matchToolClass(name: string, rules: ToolClassRules): number | undefined {
  const words = toolNameWords(name);
  if (rules.exclude.some((re) => re.test(name) || re.test(words))) return undefined;
  let first: number | undefined;
  for (const re of rules.include) {
    const at = words.search(re);
    const position = at >= 0 ? at : re.test(name) ? 0 : -1;
    if (position >= 0 && (first === undefined || position < first)) first = position;
  }
  return first;
}
