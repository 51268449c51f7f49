import { describe, expect, it } from 'vitest';
import { RECORD_OBSERVATION_NAMES } from '../../src/findings/record-values.ts';
import { runCli } from '../helpers/cli.ts';

describe('trajwatch schema --audience', () => {
  it('prints each schema in both views: the internal marks its internal fields, the external has none', async () => {
    // Every record observation the code declares has its values schema, in both views.
    for (const name of ['finding', 'manifest', 'record', ...RECORD_OBSERVATION_NAMES]) {
      const internal = await runCli(['schema', name]);
      const external = await runCli(['schema', name, '--audience', 'external']);
      expect(internal.code, internal.stderr).toBe(0);
      expect(external.code, external.stderr).toBe(0);
      expect(JSON.parse(external.stdout)).toHaveProperty('$schema');
      expect(external.stdout).not.toContain('"audience": "internal"');
      if (name !== 'manifest' && name !== 'layer-conflict') expect(internal.stdout, name).toContain('"audience": "internal"');
    }
    const external = await runCli(['schema', 'trace-question', '--audience', 'external']);
    expect(external.stdout).not.toMatch(/requested_model|served_model|ledger_key|certificate_id|window_policy_digest|"receipt"/);
    const internal = await runCli(['schema', 'trace-question']);
    expect(internal.stdout).toMatch(/requested_model/);
    const layer = await runCli(['schema', 'layer-question', '--audience', 'external']);
    expect(layer.stdout).not.toMatch(/requested_model|served_model|ledger_key|certificate_id|"receipt"/);
    expect(layer.stdout).toMatch(/primary_recommendation/);
    const bad = await runCli(['schema', 'finding', '--audience', 'partner']);
    expect(bad.code).not.toBe(0);
  }, 60_000);
});
