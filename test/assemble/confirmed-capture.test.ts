/** `confirmedCapture` over random calls and wrappers: it reads a capture as the call only when the request confirms it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { confirmedCapture } from '../../src/assemble/confirmed-capture.ts';
import { canonicalJson } from '../../src/core/canonical-json.ts';
import { jsonDigest } from '../../src/normalize/args-digest.ts';
import { toToolArgs } from '../../src/normalize/tool-args.ts';

const call = fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean()), {
  minKeys: 1,
  maxKeys: 4,
});
const wrapperKey = fc.constantFrom('input', 'inputs', 'arguments', 'payload');

describe('confirmedCapture', () => {
  it('unwraps a wrapper exactly when a member equals the request, keeping the raw and digesting the inner call', () => {
    fc.assert(
      fc.property(call, call, wrapperKey, fc.string({ maxLength: 10 }), (requested, inner, key, callId) => {
        const raw = JSON.stringify({ [key]: inner, options: null, meta: { tool_call_id: callId } });
        const out = confirmedCapture(toToolArgs(raw, 'json'), toToolArgs(JSON.stringify(requested)));
        if (canonicalJson(inner) === canonicalJson(requested)) {
          expect(out).toMatchObject({ raw, recorded: 'wrapped', wrappedAt: key, digest: jsonDigest(requested), declared: 'json' });
        } else if (out !== undefined) {
          // only another member that happens to equal the request may confirm
          expect(canonicalJson(out.parsed)).toBe(canonicalJson(requested));
        }
      }),
    );
  });

  it('never changes a capture equal to the request, nor reads text other than an equal Python literal', () => {
    fc.assert(
      fc.property(call, fc.string({ maxLength: 30 }), (requested, text) => {
        const req = toToolArgs(JSON.stringify(requested));
        expect(confirmedCapture(toToolArgs(JSON.stringify(requested)), req)).toBeUndefined();
        const out = confirmedCapture(toToolArgs(text, 'json'), req);
        if (out !== undefined) expect(out).toMatchObject({ capturedAs: 'python-literal', captured: text, parsed: requested });
      }),
    );
  });
});
