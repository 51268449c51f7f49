import type { IncomingMessage } from 'node:http';
import { createGunzip, gunzip } from 'node:zlib';
import { DecodeError, LimitError } from '../../errors.ts';
import { INFLIGHT_REFUSAL, type InflightCharge } from './inflight-budget.ts';

export interface BodyLimits {
  /** Cap on the body as sent (compressed or not). */
  maxBodyBytes: number;
  /** Cap on the body after gzip decompression. */
  maxDecompressedBytes: number;
}

/**
 * Reads a request body, counting bytes as they stream in and inflating a gzip body as it
 * arrives: past `maxBodyBytes` (as sent) or `maxDecompressedBytes` (inflated) it stops and
 * answers a LimitError before the handler ever sees the body. Every received and every
 * inflated byte is charged to `charge` before the next is taken; a charge the in-flight
 * budget refuses stops reading and inflating at once and answers `max-inflight-bytes`. A
 * body left unread is drained (not kept), so the client still gets its answer.
 */
export function readBody(
  req: IncomingMessage,
  limits: BodyLimits,
  gzipped: boolean,
  charge: InflightCharge,
): Promise<Buffer | LimitError | DecodeError | typeof INFLIGHT_REFUSAL> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limits.maxBodyBytes) {
      req.resume();
      resolve(bodyTooLarge(limits.maxBodyBytes));
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let size = 0;
    let done = false;
    const inflate = gzipped ? createGunzip() : undefined;
    const finish = (result: Buffer | LimitError | DecodeError | typeof INFLIGHT_REFUSAL) => {
      if (done) return;
      done = true;
      chunks.length = 0;
      if (!(result instanceof Buffer)) {
        inflate?.destroy();
        req.removeListener('data', onReceived);
        req.resume();
      }
      resolve(result);
    };
    const keep = (chunk: Buffer, max: number, tooLarge: () => LimitError) => {
      size += chunk.length;
      if (size > max) return finish(tooLarge());
      if (!charge.charge(chunk.length)) return finish(INFLIGHT_REFUSAL);
      chunks.push(chunk);
    };
    const onReceived = (chunk: Buffer) => {
      if (done) return;
      received += chunk.length;
      if (received > limits.maxBodyBytes) return finish(bodyTooLarge(limits.maxBodyBytes));
      if (inflate === undefined) return keep(chunk, Infinity, () => bodyTooLarge(limits.maxBodyBytes));
      // The compressed chunk is held until the inflater has taken it.
      if (!charge.charge(chunk.length)) return finish(INFLIGHT_REFUSAL);
      inflate.write(chunk, () => charge.refund(chunk.length));
    };
    req.on('data', onReceived);
    req.on('error', (err) => finish(new DecodeError(`request body could not be read: ${err.message}`, { cause: err })));
    if (inflate === undefined) {
      req.on('end', () => finish(Buffer.concat(chunks, size)));
      return;
    }
    req.on('end', () => inflate.end());
    inflate.on('data', (chunk: Buffer) => {
      if (!done) keep(chunk, limits.maxDecompressedBytes, () => inflatedTooLarge(limits.maxDecompressedBytes));
    });
    inflate.on('end', () => finish(Buffer.concat(chunks, size)));
    inflate.on('error', (err) => finish(new DecodeError(`gzip body could not be decompressed: ${err.message}`, { cause: err })));
  });
}

function bodyTooLarge(maxBodyBytes: number): LimitError {
  return new LimitError('maxBodyBytes', `request body exceeds maxBodyBytes (${maxBodyBytes} bytes)`);
}

function inflatedTooLarge(maxDecompressedBytes: number): LimitError {
  return new LimitError('maxDecompressedBytes', `decompressed body exceeds maxDecompressedBytes (${maxDecompressedBytes} bytes)`);
}

/** Gunzips a whole buffer with a cap on the output: a gzip bomb is a LimitError, not an out-of-memory crash. */
export function gunzipCapped(body: Buffer, maxDecompressedBytes: number): Promise<Buffer | LimitError | DecodeError> {
  return new Promise((resolve) => {
    gunzip(body, { maxOutputLength: maxDecompressedBytes }, (err, out) => {
      if (err === null) resolve(out);
      else if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) resolve(inflatedTooLarge(maxDecompressedBytes));
      else resolve(new DecodeError(`gzip body could not be decompressed: ${err.message}`, { cause: err }));
    });
  });
}
