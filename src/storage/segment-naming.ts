/**
 * How a log names its segment files. Two schemes:
 * - numbered: every segment is `<prefix><first record number, 16 digits><suffix>` and the newest
 *   is the one written (the write-ahead log `seg-…wal`, the outbox `seg-…jsonl`);
 * - rotated: the active segment keeps a fixed name (`findings.jsonl`, so readers and `tail`
 *   find it where they always did) and a closed one is renamed `findings.<first byte, 16
 *   digits>.jsonl`, numbered by the log-wide offset of its first byte, which needs no scan of
 *   the file to compute.
 */
export interface SegmentNaming {
  /** The fixed name of the active segment (rotated scheme), or undefined (numbered). */
  readonly activeName: string | undefined;
  name(firstNo: number): string;
  /** The first record number a file name carries, or undefined for a file that is no segment. */
  parse(fileName: string): number | undefined;
}

const DIGITS = 16;

function pad(n: number): string {
  return String(n).padStart(DIGITS, '0');
}

/** `numberedSegments('seg-', '.wal')`: `seg-0000000000000042.wal`. */
export function numberedSegments(prefix: string, suffix: string): SegmentNaming {
  return {
    activeName: undefined,
    name: (firstNo) => `${prefix}${pad(firstNo)}${suffix}`,
    parse: (fileName) => parseNumbered(fileName, prefix, suffix),
  };
}

/** `rotatedSegments('findings.jsonl')`: active `findings.jsonl`, closed `findings.0000000000001024.jsonl`. */
export function rotatedSegments(activeName: string): SegmentNaming {
  const dot = activeName.lastIndexOf('.');
  const stem = dot === -1 ? activeName : activeName.slice(0, dot);
  const ext = dot === -1 ? '' : activeName.slice(dot);
  return {
    activeName,
    name: (firstNo) => `${stem}.${pad(firstNo)}${ext}`,
    parse: (fileName) => parseNumbered(fileName, `${stem}.`, ext),
  };
}

function parseNumbered(fileName: string, prefix: string, suffix: string): number | undefined {
  if (!fileName.startsWith(prefix) || !fileName.endsWith(suffix)) return undefined;
  const digits = fileName.slice(prefix.length, fileName.length - suffix.length);
  return digits.length === DIGITS && /^\d+$/.test(digits) ? Number(digits) : undefined;
}
