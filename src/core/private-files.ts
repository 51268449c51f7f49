import { isMainThread } from 'node:worker_threads';

/**
 * The data directory holds raw telemetry — prompts, tool payloads, possibly credentials in
 * content — so what trajwatch creates there is its owner's alone: directories 0700, files 0600.
 * `serve`, `replay` and `label` set the process umask to {@link PRIVATE_UMASK} before creating
 * anything (so every file, whoever opens it, is covered), and the storage layer also asks for
 * these modes explicitly.
 */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** Clears group and other bits of everything the process creates. */
export const PRIVATE_UMASK = 0o077;

/**
 * Sets the process umask so nothing it creates is readable by group or others. A worker thread
 * cannot set it (Node throws): there only the explicit modes apply.
 */
export function restrictCreatedFiles(): void {
  if (isMainThread) process.umask(PRIVATE_UMASK);
}
