import { parseArgs, type ParseArgsOptionsConfig } from 'node:util';

/** The flags a command takes, by kind; `--help` is always one of them. */
export interface FlagSpec<S extends string, B extends string, M extends string> {
  /** `--name VALUE`. */
  strings?: readonly S[];
  /** `--name`. */
  booleans?: readonly B[];
  /** `--name VALUE`, repeatable: every value, in order. */
  repeated?: readonly M[];
  /** Takes positional arguments (input files, a key); without, one is a usage error. */
  positionals?: boolean;
}

/** What a command was given: each flag's value (absent when not given), and the positionals. */
export interface Flags<S extends string, B extends string, M extends string> {
  values: { [K in S]?: string } & { [K in B]?: boolean } & { [K in M]?: string[] };
  positionals: string[];
}

/**
 * Parses a command's arguments (`node:util` `parseArgs`, strict: an unknown flag or a missing
 * value throws its own `ERR_PARSE_ARGS_*` error, which `main` reports as a usage error). With
 * `--help` it prints `help` and returns undefined: the command then exits 0.
 *
 * @example
 * const flags = parseFlags(args, SHOW_HELP, { strings: ['data-dir', 'config'], positionals: true });
 * if (flags === undefined) return 0;
 * flags.values['data-dir']; // string | undefined
 */
export function parseFlags<const S extends string = never, const B extends string = never, const M extends string = never>(
  args: string[],
  help: string,
  spec: FlagSpec<S, B, M>,
): Flags<S, B, M> | undefined {
  const options: ParseArgsOptionsConfig = { help: { type: 'boolean' } };
  for (const name of spec.strings ?? []) options[name] = { type: 'string' };
  for (const name of spec.booleans ?? []) options[name] = { type: 'boolean' };
  for (const name of spec.repeated ?? []) options[name] = { type: 'string', multiple: true };
  const { values, positionals } = parseArgs({ args, options, allowPositionals: spec.positionals === true });
  if (values['help'] === true) {
    process.stdout.write(help);
    return undefined;
  }
  return { values: values as Flags<S, B, M>['values'], positionals };
}
