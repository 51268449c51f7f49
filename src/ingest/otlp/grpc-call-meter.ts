/**
 * The interceptor every OTLP/gRPC call passes first: it charges the call's bytes to the
 * in-flight budget as they arrive off the HTTP/2 stream (before grpc-js buffers or inflates
 * them), and counts a call grpc-js ended before it reached a handler.
 *
 * grpc-js inflates a compressed message whole, inside itself, before any hook sees it; so the
 * moment a compressed message is complete its inflation is reserved at the most it may reach
 * (`maxDecompressedBytes`), and brought down to its real size once delivered. A charge the
 * budget refuses ends the call there, RESOURCE_EXHAUSTED with RetryInfo (`max-inflight-bytes`),
 * before grpc-js takes the chunk: it is neither buffered nor inflated.
 */
import type { ServerHttp2Stream } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { INFLIGHT_REFUSAL, type InflightBudget } from './inflight-budget.ts';

/** Where one length-prefixed gRPC message ends (a 1-byte compressed flag, a 4-byte length). */
class MessageFrames {
  #header = Buffer.alloc(5);
  #headerHave = 0;
  #bodyLeft = 0;
  #compressed = false;

  /** Feeds a chunk; calls `complete(compressed, length)` for each message the chunk completes. */
  push(chunk: Buffer, complete: (compressed: boolean, length: number) => void): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.#bodyLeft > 0) {
        const take = Math.min(this.#bodyLeft, chunk.length - at);
        this.#bodyLeft -= take;
        at += take;
        if (this.#bodyLeft === 0) complete(this.#compressed, this.#header.readUInt32BE(1));
        continue;
      }
      const take = Math.min(5 - this.#headerHave, chunk.length - at);
      chunk.copy(this.#header, this.#headerHave, at, at + take);
      this.#headerHave += take;
      at += take;
      if (this.#headerHave < 5) continue;
      this.#headerHave = 0;
      this.#compressed = this.#header[0] === 1;
      this.#bodyLeft = this.#header.readUInt32BE(1);
      if (this.#bodyLeft === 0) complete(this.#compressed, 0);
    }
  }
}

export interface CallMeterOptions {
  budget: InflightBudget;
  /** The most a compressed message may inflate to (grpc-js's `max_receive_message_length`). */
  maxDecompressedBytes: number;
  /** The refusal of a call over the budget (RESOURCE_EXHAUSTED + RetryInfo). */
  refusal: (reason: string) => grpc.StatusObject;
  /** A call refused for the budget. */
  onRefused: () => void;
  /** A call grpc-js ended before it reached trajwatch (too large, undecompressible, cancelled). */
  onUndelivered: () => void;
}

export function callMeter(options: CallMeterOptions): grpc.ServerInterceptor {
  return (_method, call) => {
    let delivered = false;
    let answered = false;
    const charge = options.budget.open();
    const frames = new MessageFrames();
    let inflationReserved = 0;
    // The base call grpc-js hands the first interceptor holds the HTTP/2 stream (grpc-js 1.14;
    // test/reliability/inflight-memory.test.ts fails if a grpc-js upgrade moves it).
    const stream = (call as unknown as { stream?: ServerHttp2Stream }).stream;
    const onData = (chunk: Buffer) => {
      if (answered) return;
      let ok = charge.charge(chunk.length);
      frames.push(chunk, (compressed) => {
        if (!ok || !compressed) return;
        ok = charge.charge(options.maxDecompressedBytes);
        if (ok) inflationReserved += options.maxDecompressedBytes;
      });
      if (ok) return;
      answered = true;
      charge.release();
      options.onRefused();
      call.sendStatus(options.refusal(INFLIGHT_REFUSAL));
    };
    stream?.prependListener('data', onData);
    const done = () => {
      stream?.off('data', onData);
      charge.release();
    };
    return new grpc.ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMessage: (message: Buffer, pass) => {
            delivered = true;
            // Inflated: what it holds now is its real size, not the reservation.
            if (inflationReserved > message.length) charge.refund(inflationReserved - message.length);
            inflationReserved = 0;
            pass(message);
          },
          onCancel: () => {
            done();
            if (!delivered && !answered) options.onUndelivered();
          },
        }),
      sendStatus: (status, pass) => {
        answered = true;
        pass(status);
        done();
      },
    });
  };
}
