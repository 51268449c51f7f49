/** What every JS scenario takes and returns: the two scripted turns of one session. */
export interface ScenarioOptions {
  /** OTLP/HTTP base URL; exporters append `/v1/traces`. */
  otlpUrl: string;
  /** The stand-in model's base URL, ending in `/v1`. */
  modelBaseUrl: string;
  /** Set the framework's documented way; the trajectory key must be this id. */
  sessionId: string;
  /**
   * Runs after turn 1's spans were flushed and before turn 2 starts: a real session has a
   * pause between turns, long enough for trajwatch to close the trajectory in between.
   */
  betweenTurns?: () => Promise<void>;
}

export interface ScenarioRun {
  /** The final text of each turn, in order. */
  answers: string[];
}
