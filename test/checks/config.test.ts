import { describe, expect, it } from 'vitest';
import { defaultChecksConfig, parseChecksConfig } from '../../src/checks/config.ts';
import { ConfigError } from '../../src/errors.ts';

describe('checks config', () => {
  it('fills every default from an empty object', () => {
    expect(parseChecksConfig({}, 'test')).toEqual(defaultChecksConfig);
    expect(defaultChecksConfig.options.passthroughMinChars).toBe(24);
    expect(defaultChecksConfig.outbound.include.length).toBeGreaterThan(0);
  });

  it('keeps the other defaults when one key is set', () => {
    const cfg = parseChecksConfig({ gates: { include: ['^sign_off$'] } }, 'test');
    expect(cfg.gates).toEqual({ include: ['^sign_off$'], exclude: [] });
    expect(cfg.outbound).toEqual(defaultChecksConfig.outbound);
  });

  it('rejects unknown keys and patterns that do not compile, naming every one', () => {
    let error: unknown;
    try {
      parseChecksConfig({ outbound: { include: ['send(', 'ok'] }, gates: { inclde: [] }, options: { passthroughMinChars: 2 } }, 'trajwatch.json');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const issues = (error as ConfigError).issues.join('\n');
    expect(issues).toContain('outbound.include.0: is not a valid regular expression (value: "send(")');
    expect(issues).toContain('gates.inclde: unknown key');
    expect(issues).toContain('options.passthroughMinChars');
  });

  it('rejects a passthrough maximum below the minimum', () => {
    expect(() => parseChecksConfig({ options: { passthroughMinChars: 50, passthroughMaxChars: 20 } }, 't')).toThrow(/options.passthroughMaxChars/);
  });
});
