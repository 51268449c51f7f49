import type { HiddenBy } from './capture-table.ts';

/**
 * Exact tool repetition's row of the capture table (see `capture-table.ts`): which capture gaps
 * make "no repetition" unprovable. It is not an L0 check, but the manifest accounts for it like
 * one, so its row sits in the same table (`CAPTURE_TABLE` in `registry.ts`).
 */
export const toolRepetitionHiddenBy: HiddenBy = {
  'tool-name-not-captured': { hides: true, why: 'a call with no tool name joins no group' },
  'tool-call-not-captured': { hides: true, why: 'a requested call that never became a tool span may have repeated another' },
  'tool-args-not-captured': { hides: true, why: 'a call whose arguments were not captured joins no group: absent arguments are unknown, not equal' },
  'tool-result-not-captured': { hides: false, why: 'a result does not bear on whether two calls were equal' },
  'unread-convention': { hides: true, why: 'a span in a convention trajwatch does not read may be a repeated call' },
  'clock-skew': { hides: false, why: 'repetition counts equal calls, whatever their order' },
};
