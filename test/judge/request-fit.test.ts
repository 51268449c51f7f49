import { describe, expect, it } from 'vitest';
import { JudgeClientSchema } from '../../src/judge/client.ts';
import { requestRefusal } from '../../src/judge/request-fit.ts';

describe('requestRefusal', () => {
  const client = JudgeClientSchema.parse({ model: 'smollm2', contextTokens: 8192, maxOutputTokens: 256 });

  it("refuses a request the model's context cannot hold, naming the token estimate and the context", () => {
    expect(requestRefusal(40_000, 64 * 1024, client)).toEqual({
      reason: 'context-tokens',
      detail: '~10000 prompt tokens estimated (40000 bytes / 4) + 256 completion tokens, over the 8192-token context of smollm2',
    });
  });

  it('sends a request that fits with its completion cap, and checks nothing when the context is not configured', () => {
    expect(requestRefusal(4 * (8192 - 256), 64 * 1024, client)).toBeNull();
    expect(requestRefusal(4 * (8192 - 256) + 1, 64 * 1024, client)?.reason).toBe('context-tokens');
    expect(requestRefusal(60_000, 64 * 1024, { ...client, contextTokens: null })).toBeNull();
    expect(JudgeClientSchema.parse({}).contextTokens).toBeNull();
  });

  it('keeps the byte cap first, with its detail unchanged', () => {
    expect(requestRefusal(70_000, 64 * 1024, client)).toEqual({ reason: 'request-bytes', detail: '70000 bytes, cap 65536' });
  });
});
