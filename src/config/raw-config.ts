/** A key path into a raw configuration, as zod reports it. */
export type ConfigPath = readonly PropertyKey[];

/** A raw (unvalidated) configuration object and where it came from. */
export interface RawConfig {
  value: Record<string, unknown>;
  source: string;
  /**
   * The file line of the key at a path, when the file format keeps positions (YAML does,
   * JSON.parse does not): undefined when the key is not in the file, null when its value came
   * from the environment or a flag, `{ from }` naming which (`env TRAJWATCH_OTLP_HTTP`, `--otlp-http`).
   */
  locate?: ((path: ConfigPath) => number | undefined | null | { from: string }) | undefined;
}
