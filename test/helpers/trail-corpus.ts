/**
 * Which TRAIL dev traces a run has. The repository holds five of the 26 (TRAIL's SWE-bench
 * part, MIT, see test/fixtures/trail-dev/README.md); the other 21 are GAIA-derived and may
 * never enter the repository or the package, so they are read from
 * `../shared/fixtures/trail-dev/` beside the checkout, and only when asked for.
 *
 * `npm test` runs the five alone, always: the repository's tests need nothing outside it, so a
 * fresh clone and CI run the same suite. The 26-trace run is asked for by
 * `TRAJWATCH_TRAIL_CORPUS=full` (`npm run test:trail-full`, and `.ci/run` when shared/ is
 * there); asked for and shared/ missing, it fails instead of running fewer traces. Every TRAIL
 * test, bench and script takes its files from here.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The five SWE-bench traces copied into the repository. */
export const IN_REPO_TRACE_IDS: readonly string[] = [
  '272cdc645b731837366576b37d40fb65',
  '3e65ac7e09b0edd2a5f6b0b18df20f65',
  '72822db6e120878d916b515c2501246b',
  'af1931b778d7a82ca6a1f7dfdb9aa8bb',
  'fdaf88f3c0437bf27438b60ba4102c8a',
];

/** The 21 GAIA-derived traces, only ever read from shared/ (ids only: no content here). */
export const SHARED_ONLY_TRACE_IDS: readonly string[] = [
  '0035f455b3ff2295167a844f04d85d34',
  '0ebe673d64647ec44c370638b82d3c78',
  '1427b326e21963a1228647ad8dff2bf4',
  '25c8275651013fe8398ef0f735eb0912',
  '27a6c5ebc3311542156fdde857a0035f',
  '3205fa0cb2135fe671bf7cd0e5a26151',
  '3215fc75e81bdb73706a4fb37b66427f',
  '3f05ba33cd4ae18ccba6db9a5749c16f',
  '4a8d094e92433f1ba1da21f602c417d9',
  '4ae16319f0de44a7d1e84595b41ae08d',
  '53dba4241b22d5039c9c119871c7c8b4',
  '75121379e11c550f3ca58e17c972266b',
  '7ee8e8df6e8cd101d9af8a4a4f6ceedb',
  '876eb108c8650d4ada63a8d39aa1e96c',
  '88c63c780aba1f23c3c5345aa340d7e2',
  '9ec7d4a8ab8c74ab56361ef29d1b1660',
  'a99faf782e8ad4d5f1ccdfcb7e143b9a',
  'd9a8dff7edce2d1b15ed4769886d9a2a',
  'ef0207e4427fe22aeb1c2105932b74d7',
  'f04b425c107f7b972209528a46c407d9',
  'f39aec9b8a61fd2aaed5849cc00bc165',
];

export const IN_REPO_DIR = fileURLToPath(new URL('../fixtures/trail-dev/', import.meta.url));
/** `../shared/fixtures/trail-dev/` beside the checkout (the checkout is two levels up from here). */
export const SHARED_DIR = fileURLToPath(new URL('../../../shared/fixtures/trail-dev/', import.meta.url));

const OTLP_SUFFIX = '.otlp.json.gz';
const LABELS_SUFFIX = '.labels.json';

export interface TrailFile {
  traceId: string;
  /** The gzipped OTLP/JSON `ExportTraceServiceRequest`. */
  otlpPath: string;
  /** The human labels; read for measuring only, never by the analyzer. */
  labelsPath: string;
  inRepo: boolean;
}

export interface TrailCorpus {
  /** `full`: the 26 (five in-repo, 21 from shared/); `in-repo`: the five alone. */
  kind: 'full' | 'in-repo';
  /** Sorted by trace id. */
  files: TrailFile[];
  /** One line for test titles and printed output: which traces this run has, and from where. */
  description: string;
}

export interface CorpusOptions {
  sharedDir?: string;
  inRepoDir?: string;
  /** `in-repo` (the default) or `full`; default from `TRAJWATCH_TRAIL_CORPUS`. */
  want?: 'in-repo' | 'full';
}

/** The corpus asked for by the environment: `TRAJWATCH_TRAIL_CORPUS=full`, else the five in the repository. */
export function wantedCorpus(env: NodeJS.ProcessEnv = process.env): 'in-repo' | 'full' {
  const value = env.TRAJWATCH_TRAIL_CORPUS;
  if (value === undefined || value === '' || value === 'in-repo') return 'in-repo';
  if (value === 'full') return 'full';
  throw new Error(`TRAJWATCH_TRAIL_CORPUS=${JSON.stringify(value)}: expected "full" or "in-repo"`);
}

const traceIdsIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith(OTLP_SUFFIX))
    .map((f) => f.slice(0, -OTLP_SUFFIX.length))
    .sort();

const sameIds = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().every((id, i) => id === [...b].sort()[i]);

function file(dir: string, traceId: string, inRepo: boolean): TrailFile {
  const labelsPath = join(dir, `${traceId}${LABELS_SUFFIX}`);
  if (!existsSync(labelsPath)) throw new Error(`TRAIL corpus: ${traceId} has no labels file in ${dir}`);
  return { traceId, otlpPath: join(dir, `${traceId}${OTLP_SUFFIX}`), labelsPath, inRepo };
}

/**
 * Resolves the corpus. Throws (never shrinks quietly) when the in-repo folder does not hold
 * exactly the five, and when the full corpus is asked for and shared/ is missing or does not
 * hold exactly the 26. The in-repo corpus never looks at shared/.
 */
export function resolveTrailCorpus(options: CorpusOptions = {}): TrailCorpus {
  const inRepoDir = options.inRepoDir ?? IN_REPO_DIR;
  const sharedDir = options.sharedDir ?? SHARED_DIR;
  const want = options.want ?? wantedCorpus();

  const inRepo = traceIdsIn(inRepoDir);
  if (!sameIds(inRepo, IN_REPO_TRACE_IDS)) {
    throw new Error(
      `TRAIL corpus: ${inRepoDir} must hold exactly the five SWE-bench traces ${IN_REPO_TRACE_IDS.join(', ')}; it holds ${inRepo.join(', ') || 'none'}`,
    );
  }
  const files = IN_REPO_TRACE_IDS.map((id) => file(inRepoDir, id, true));

  if (want === 'in-repo') {
    return {
      kind: 'in-repo',
      files: files.sort((a, b) => (a.traceId < b.traceId ? -1 : 1)),
      description: `in-repo: ${files.length} SWE-bench traces from test/fixtures/trail-dev (the 21 GAIA-derived ones run in npm run test:trail-full)`,
    };
  }
  if (!existsSync(sharedDir)) {
    throw new Error(
      `TRAIL corpus: the full corpus was asked for (TRAJWATCH_TRAIL_CORPUS=full) and ${sharedDir} is missing; ` +
        'its 21 GAIA-derived traces are never in the repository. Run it from a checkout with ../shared/fixtures/trail-dev/ beside it.',
    );
  }

  const shared = traceIdsIn(sharedDir);
  const expected = [...IN_REPO_TRACE_IDS, ...SHARED_ONLY_TRACE_IDS];
  if (!sameIds(shared, expected)) {
    const missing = expected.filter((id) => !shared.includes(id));
    const extra = shared.filter((id) => !expected.includes(id));
    throw new Error(
      `TRAIL corpus: ${sharedDir} must hold the 26 TRAIL dev traces; missing: ${missing.join(', ') || 'none'}; unexpected: ${extra.join(', ') || 'none'}`,
    );
  }
  files.push(...SHARED_ONLY_TRACE_IDS.map((id) => file(sharedDir, id, false)));
  return {
    kind: 'full',
    files: files.sort((a, b) => (a.traceId < b.traceId ? -1 : 1)),
    description: `full: ${files.length} traces, ${IN_REPO_TRACE_IDS.length} from test/fixtures/trail-dev and ${SHARED_ONLY_TRACE_IDS.length} from ${sharedDir}`,
  };
}

let resolved: TrailCorpus | undefined;

/** The corpus of this run (resolved once per module graph). */
export function trailCorpus(): TrailCorpus {
  resolved ??= resolveTrailCorpus();
  return resolved;
}

/** Whether `traceId` is in this run's corpus: specific expectations are keyed by present traces only. */
export const hasTrace = (traceId: string): boolean => trailCorpus().files.some((f) => f.traceId === traceId);
