/** The state file `up` writes and `demo`, `status` and `down` read: what runs where, by pid. */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type LocalPlacement, localMapping, type Mapping } from './mapping.ts';

export interface RunningService {
  name: string;
  /** Absent for an attached broker (`up --kafka`): not ours to stop. */
  pid?: number;
  log?: string;
  /** Where it answers, for the report (`127.0.0.1:PORT`). */
  addresses: Record<string, string>;
}

export interface StackState extends LocalPlacement {
  /** The broker `up` started (stopped by `down`), or the one it was pointed at. */
  kafka: { brokers: string[]; own: boolean };
  services: RunningService[];
  startedAt: string;
}

export const stateFile = (stateDir: string): string => join(stateDir, 'state.json');

export async function readState(stateDir: string): Promise<StackState | undefined> {
  const text = await readFile(stateFile(stateDir), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  return text === undefined ? undefined : (JSON.parse(text) as StackState);
}

export async function writeState(state: StackState): Promise<void> {
  await writeFile(stateFile(state.stateDir), `${JSON.stringify(state, null, 2)}\n`);
}

/** The local mapping of a running stack. */
export const mappingOf = (state: StackState): Mapping => localMapping(state);

/** Whether `pid` is alive and its command line names the state directory (so never an unrelated, reused pid). */
export async function ownsPid(pid: number, stateDir: string): Promise<boolean> {
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return cmdline?.split('\0').some((arg) => arg.includes(stateDir)) === true;
}
