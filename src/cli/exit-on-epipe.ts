/**
 * A reader that stops early (`trajwatch tail | head`) closes the pipe; the next write fails
 * with EPIPE. A command that only prints ends then, quietly and with success, as `cat` does;
 * a command that serves (`serve`, `label`) keeps serving and only its printing stops.
 */
export function onClosedStdout(printsOnly: boolean): void {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (printsOnly) process.exit(0);
  });
}
