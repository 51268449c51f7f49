import { globSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * The two projects, by a rule read off the files, never a list: a test file is `integration`
 * when it, or a module of test/ it imports (transitively), imports a process or network API
 * (child_process, net, http(s), http2, dgram, tls, worker_threads, grpc-js, kafkajs), calls
 * `fetch`, or says `@integration` in a comment; every other file is `unit`. The unit project's
 * setup (test/helpers/unit-guard.ts) makes starting a process, listening, connecting and fetch
 * throw, so a unit file that starts one through src/ fails rather than drifting.
 */
const STARTS_SOMETHING =
  /from ['"](node:)?(child_process|net|http|https|http2|dgram|tls|worker_threads)['"]|from ['"](@grpc\/grpc-js|kafkajs)['"]|\bfetch\(|@integration\b/;
const RELATIVE_IMPORT = /(?:from|import\()\s*['"](\.{1,2}\/[^'"]+)['"]/g;

const verdicts = new Map<string, boolean>();
function startsSomething(file: string, visiting = new Set<string>()): boolean {
  const known = verdicts.get(file);
  if (known !== undefined) return known;
  if (visiting.has(file) || relative('test', file).startsWith('..')) return false;
  visiting.add(file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false; // not a file of test/ (a fixture folder, a path built at run time)
  }
  const verdict = STARTS_SOMETHING.test(text) || [...text.matchAll(RELATIVE_IMPORT)].some((m) => startsSomething(join(dirname(file), m[1]!), visiting));
  verdicts.set(file, verdict);
  return verdict;
}

const testFiles = globSync('test/**/*.test.ts');
const integration = testFiles.filter((f) => startsSomething(f));
const unit = testFiles.filter((f) => !integration.includes(f));

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration tests start real servers on fixed loopback ports; files run one at a time
    // per worker and two workers match the two cores this project is built and tested on.
    maxWorkers: 2,
    reporters: ['default', ['json', { outputFile: '.cache/vitest-report.json' }]],
    projects: [
      { extends: true, test: { name: 'unit', include: unit, setupFiles: ['test/helpers/unit-guard.ts'] } },
      { extends: true, test: { name: 'integration', include: integration } },
    ],
  },
});
