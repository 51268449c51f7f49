import { cannotHide, hides, UNREAD_SPAN, UNSPANNED_CALL, type HiddenBy } from './capture-table.ts';

/**
 * Exact tool repetition's row of the capture table (see `capture-table.ts`): which capture gaps
 * make "no repetition" unprovable. It is not an L0 check, but the manifest accounts for it like
 * one, so its row sits in the same table (`CAPTURE_TABLE` in `registry.ts`).
 */
export const toolRepetitionHiddenBy: HiddenBy = {
  'tool-name-not-captured': hides('a call with no tool name joins no group'),
  'tool-call-not-captured': hides(`${UNSPANNED_CALL} may have repeated another`),
  'tool-args-not-captured': hides('a call whose arguments were not captured joins no group: absent arguments are unknown, not equal'),
  'tool-result-not-captured': cannotHide('a result does not bear on whether two calls were equal'),
  'unread-convention': hides(`${UNREAD_SPAN} may be a repeated call`),
  'clock-skew': cannotHide('repetition counts equal calls, whatever their order'),
};
