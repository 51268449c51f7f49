// Prints the plain closing line CI reads ("tests: N passed, N failed, N skipped") from
// vitest's JSON report, so the count does not depend on vitest's own output format.
import { readFileSync } from 'node:fs';

const path = process.argv[2] ?? '.cache/vitest-report.json';
let report: {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults?: { assertionResults?: { ancestorTitles: string[]; title: string; status: string }[] }[];
};
try {
  report = JSON.parse(readFileSync(path, 'utf8'));
} catch (err) {
  console.error(`test-summary: no vitest report at ${path}: ${(err as Error).message}`);
  process.exit(1);
}
// Which TRAIL traces the run had (test/helpers/trail-corpus.test.ts names it in a title):
// the five in-repo ones alone, or all 26 with ../shared beside the checkout.
const corpusTest = (report.testResults ?? [])
  .flatMap((file) => file.assertionResults ?? [])
  .find((a) => a.ancestorTitles[0] === 'the TRAIL corpus of this run' && a.title.startsWith('is '));
console.log(`TRAIL corpus: ${corpusTest === undefined ? 'not run' : `${corpusTest.title.slice('is '.length)} (${corpusTest.status})`}`);
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);
process.exit(report.numFailedTests === 0 && report.numPassedTests > 0 ? 0 : 1);
