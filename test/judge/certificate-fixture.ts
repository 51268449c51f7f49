import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CERTIFICATE_FORMAT, type CurrentCertificate } from '../../src/judge/certificate.ts';
import { JudgeClientSchema } from '../../src/judge/client.ts';
import type { JudgeConfig } from '../../src/judge/config.ts';
import { evaluatorIdentity } from '../../src/judge/evaluator-identity.ts';
import { kappaInterval } from '../../src/calibration/kappa-interval.ts';
import { cohensKappa } from '../../src/calibration/kappa.ts';
import { requestContractDigest } from '../../src/judge/prompt.ts';
import { questionDigest, SEMANTIC_QUESTIONS } from '../../src/judge/questions.ts';
import { windowPolicyDigest } from '../../src/windows/policy.ts';
import { WINDOW_KINDS, type WindowKind } from '../../src/windows/window.ts';

const Q = SEMANTIC_QUESTIONS[0]!;
const DEFAULT_CLIENT = JudgeClientSchema.parse({ model: 'judge' });

/**
 * The gold sample the fixture's certificates claim, so their numbers are those `calibrate` would
 * compute: 100 labels, 89 agreeing (yes/yes 40, yes/no 6, no/yes 5, no/no 49): kappa 0.778,
 * 95 % interval lower bound 0.624 — above 0.6, below 0.8.
 */
const GOLD_PAIRS: [string, string][] = [
  ...Array<[string, string]>(40).fill(['yes', 'yes']),
  ...Array<[string, string]>(6).fill(['yes', 'no']),
  ...Array<[string, string]>(5).fill(['no', 'yes']),
  ...Array<[string, string]>(49).fill(['no', 'no']),
];
const INTERVAL = kappaInterval(GOLD_PAIRS)!;

/** A certificate of the current format fields (widened so a test can also build an outdated one). */
export type CertificateOver = Partial<CurrentCertificate> & Record<string, unknown>;

/**
 * A well-formed certificate for the first question, bound to an event window under the default
 * client; override what the test is about.
 */
export function validCertificate(over: CertificateOver = {}, policy = 'd'.repeat(64)): CurrentCertificate {
  return {
    format: CERTIFICATE_FORMAT,
    questionId: Q.id,
    questionVersion: Q.version,
    questionDigest: questionDigest(Q),
    optionOrder: [...Q.options],
    windowPolicyDigest: policy,
    windowKind: 'event',
    requestContractDigest: requestContractDigest(DEFAULT_CLIENT),
    evaluatorDigest: evaluatorIdentity(DEFAULT_CLIENT).digest,
    requestedModel: 'judge',
    servedModel: 'judge-served',
    goldN: GOLD_PAIRS.length,
    kappa: cohensKappa(GOLD_PAIRS)!,
    agreement: 0.89,
    kappaInterval: { level: INTERVAL.level, method: INTERVAL.method, lower: INTERVAL.lower, upper: INTERVAL.upper },
    minKappa: 0.6,
    evidenceRefs: [{ kind: 'artifact', uri: 'file:/gold.jsonl', excerpt: 'sha256:00' }],
    issuedAt: '2026-01-01T00:00:00Z',
    ...over,
  } as CurrentCertificate;
}

/** A certificate for the first question bound to everything `cfg` judges with, on one window kind. */
export function boundCertificate(cfg: JudgeConfig, windowKind: WindowKind, over: CertificateOver = {}): CurrentCertificate {
  return validCertificate(
    {
      windowKind,
      requestContractDigest: requestContractDigest(cfg.client),
      evaluatorDigest: evaluatorIdentity(cfg.client).digest,
      requestedModel: cfg.client.model,
      ...over,
    },
    windowPolicyDigest(cfg.windowPolicy),
  );
}

/**
 * Install `<name>-<kind>.json` for every window kind in `kinds`, each bound to `cfg`: a
 * certificate qualifies one layer only.
 */
export async function installBoundCertificates(
  dataDir: string,
  cfg: JudgeConfig,
  over: CertificateOver = {},
  name = 'q0',
  kinds: readonly WindowKind[] = WINDOW_KINDS,
): Promise<void> {
  const dir = join(dataDir, cfg.certificatesDir);
  await mkdir(dir, { recursive: true });
  for (const kind of kinds) await writeFile(join(dir, `${name}-${kind}.json`), JSON.stringify(boundCertificate(cfg, kind, over)));
}
