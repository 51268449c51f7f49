import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { BudgetSchema } from '../windows/budget.ts';
import { WindowPolicySchema } from '../windows/policy.ts';
import { SamplingSchema } from '../windows/sampling.ts';
import { JudgeClientSchema } from './client.ts';
import { LabelWindowsSchema } from './label-windows.ts';
import { DecisionPolicySchema } from './decision-policy.ts';
import { LedgerBoundsSchema } from './ledger/bounds.ts';
import { WalkConfigSchema } from './walk/walk-config.ts';

/**
 * Windows, sampling, budget, judge endpoint, decision policy and where certificates and the
 * ledger live. Disabled by default: no model endpoint is configured out of the box.
 *
 * @example JudgeConfigSchema.parse({ enabled: true, client: { baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:7b' } })
 */
export const JudgeConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    windowPolicy: WindowPolicySchema,
    sampling: SamplingSchema,
    budget: BudgetSchema,
    client: JudgeClientSchema,
    decision: DecisionPolicySchema,
    /** Installed certificates (`*.json`); relative paths are under `dataDir`. */
    certificatesDir: z.string().min(1).default('judge/certificates'),
    /** Ledger directory (`ledger.jsonl`, `ledger.lock`); relative paths are under `dataDir`. */
    ledgerDir: z.string().min(1).default('judge'),
    /** The ledger's bounds in bytes (`maxBytes`, `compactAtBytes`); see ledger-bounds.ts. */
    ledger: LedgerBoundsSchema,
    /** The layered walk (L1–L4, stopping rules, conflicts, verifier); off by default. See walk/walk-config.ts. */
    walk: WalkConfigSchema,
    /** Judged windows kept, bounded, for `trajwatch label` (label-windows.ts). */
    labelWindows: LabelWindowsSchema,
  })
  .superRefine((cfg, ctx) => {
    if (cfg.enabled && cfg.client.model === '') {
      ctx.addIssue({ code: 'custom', path: ['client', 'model'], message: 'is required when the judge is enabled' });
    }
  })
  .prefault({});

export type JudgeConfig = z.infer<typeof JudgeConfigSchema>;

/** A configured path resolved against the data directory. */
export function underDataDir(dataDir: string, path: string): string {
  return isAbsolute(path) ? path : join(dataDir, path);
}
