import { DecodeError } from '../errors.ts';
import { readOtlpFile } from './otlp/file.ts';
import type { PipelineInput } from './pipeline-input.ts';

/** What a file source feeds: an input that takes logs requests too. */
export type FileInput = PipelineInput & Required<Pick<PipelineInput, 'acceptLogs'>>;

/** What a file source says as it reads (`replay` writes each on stderr). */
export interface FileSourceReport {
  /** `file` could not be read or decoded; the files after it are still read. */
  failed(file: string, error: DecodeError): void;
  /** One thing `file` held that was not taken whole: a rejected span or log record, unattachable content events. */
  note(file: string, message: string): void;
  /** `done` of `total` files are behind; told after each file read. */
  progress(done: number, total: number): void;
}

/** How many of the files were read, and how many could not be read or decoded. */
export interface FileSourceResult {
  read: number;
  failures: number;
}

/**
 * Feeds recorded OTLP files (`ingest/otlp/file.ts`: traces and logs requests, JSON or
 * protobuf, gzip or not) to `input`, one file after another, each request in file order. A
 * file that cannot be read is reported and skipped. Stops before the next file once `signal`
 * is aborted.
 */
export async function feedFiles(paths: readonly string[], input: FileInput, report: FileSourceReport, signal?: AbortSignal): Promise<FileSourceResult> {
  let read = 0;
  let failures = 0;
  for (const [i, file] of paths.entries()) {
    if (signal?.aborted === true) break;
    const requests = await readOtlpFile(file);
    if (requests instanceof DecodeError) {
      failures++;
      report.failed(file, requests);
      continue;
    }
    read++;
    for (const recorded of requests) {
      if (recorded.signal === 'logs') {
        const { unattachable } = input.acceptLogs(recorded.request);
        for (const r of recorded.request.rejected) report.note(file, `log record rejected: ${r.reason}`);
        if (unattachable > 0) report.note(file, `${unattachable} GenAI content event(s) without a trace and span id`);
        continue;
      }
      input.accept(recorded.request);
      for (const r of recorded.request.rejected) report.note(file, `span ${r.spanId ?? '?'} rejected: ${r.reason}`);
    }
    report.progress(i + 1, paths.length);
  }
  return { read, failures };
}
