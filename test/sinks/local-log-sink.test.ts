import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalLogSink } from '../../src/sinks/local-log-sink.ts';
import { contractFinding, runFindingSinkContract } from '../contracts/finding-sink.contract.ts';

const FINDING_BYTES = JSON.stringify(contractFinding(0)).length + 1;
const lines = async (path: string) =>
  (await readFile(path, 'utf8').catch(() => ''))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

runFindingSinkContract({
  name: 'LocalLogSink',
  open: async (dir, { pendingLimitRecords }) => ({
    sink: await LocalLogSink.open(dir, pendingLimitRecords * FINDING_BYTES),
    readBack: async (stream) => lines(join(dir, `${stream}.jsonl`)),
  }),
});
