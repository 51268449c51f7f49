import type { IncomingMessage } from 'node:http';
import { gunzip } from 'node:zlib';
import { DecodeError, LimitError } from '../errors.ts';

/**
 * Reads a request body, counting bytes as they stream in: past `maxBodyBytes` it stops
 * reading and answers a LimitError before the handler ever sees the body.
 */
export function readBody(req: IncomingMessage, maxBodyBytes: number): Promise<Buffer | LimitError | DecodeError> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      req.resume();
      resolve(bodyTooLarge(maxBodyBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > maxBodyBytes) {
        done = true;
        chunks.length = 0;
        resolve(bodyTooLarge(maxBodyBytes));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!done) resolve(Buffer.concat(chunks, size));
      done = true;
    });
    req.on('error', (err) => {
      if (!done) resolve(new DecodeError(`request body could not be read: ${err.message}`, { cause: err }));
      done = true;
    });
  });
}

function bodyTooLarge(maxBodyBytes: number): LimitError {
  return new LimitError('maxBodyBytes', `request body exceeds maxBodyBytes (${maxBodyBytes} bytes)`);
}

/** Gunzips with a cap on the output: a gzip bomb is a LimitError, not an out-of-memory crash. */
export function gunzipCapped(body: Buffer, maxDecompressedBytes: number): Promise<Buffer | LimitError | DecodeError> {
  return new Promise((resolve) => {
    gunzip(body, { maxOutputLength: maxDecompressedBytes }, (err, out) => {
      if (err === null) resolve(out);
      else if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
        resolve(
          new LimitError(
            'maxDecompressedBytes',
            `decompressed body exceeds maxDecompressedBytes (${maxDecompressedBytes} bytes)`,
          ),
        );
      } else resolve(new DecodeError(`gzip body could not be decompressed: ${err.message}`, { cause: err }));
    });
  });
}
