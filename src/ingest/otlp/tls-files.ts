/**
 * The receivers' certificate and key, read once at start from the PEM files of
 * `receiver.tls`. One reader for both receivers, so the HTTP and the gRPC receiver fail on the
 * same missing file with the same error naming its key.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../errors.ts';
import type { ReceiverTls } from './receiver-config.ts';

export interface TlsPem {
  cert: Buffer;
  key: Buffer;
}

/** Reads `tls`'s files; throws ConfigError naming `receiver.tls.<key>` and the path when one cannot be read. */
export function readTlsFiles(tls: ReceiverTls): TlsPem {
  const read = (key: string, path: string) => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new ConfigError([`receiver.tls.${key}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`], 'receiver.tls');
    }
  };
  return { cert: read('certFile', tls.certFile), key: read('keyFile', tls.keyFile) };
}
