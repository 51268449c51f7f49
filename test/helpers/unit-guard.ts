/**
 * Setup of the `unit` project (vitest.config.ts): a unit test starts no process, server,
 * socket or broker. Each way to start one throws here, so a file of the unit project that
 * reaches one (through src/, which the classification does not read) fails, naming what it did.
 */
import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

function refuse(what: string): () => never {
  return () => {
    throw new Error(
      `${what} in a unit test: the unit project starts no process, server, socket or broker. ` +
        'Mark the file `@integration` in a comment (vitest.config.ts reads the mark), or keep the I/O out of it.',
    );
  };
}

const PROCESS_STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
for (const name of PROCESS_STARTERS) Object.assign(childProcess, { [name]: refuse(`child_process.${name}`) });
net.Server.prototype.listen = refuse('listening on a socket');
net.Socket.prototype.connect = refuse('opening a socket');
dgram.Socket.prototype.bind = refuse('binding a UDP socket');
globalThis.fetch = refuse('fetch');
// ESM imports of node:child_process read the patched functions from here on.
syncBuiltinESMExports();
