// Writes the Grafana dashboards (dashboards/json/*.json) from their typed sources in
// dashboards/src. `--check` writes nothing and exits 1 when a file is out of date.
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { DASHBOARDS } from '../../dashboards/src/index.ts';

const outDir = new URL('../../dashboards/json/', import.meta.url);
const check = process.argv.includes('--check');
let stale = 0;
await mkdir(outDir, { recursive: true });
for (const { file, build } of DASHBOARDS) {
  const url = new URL(file, outDir);
  const text = `${JSON.stringify(build(), null, 2)}\n`;
  const current = await readFile(url, 'utf8').catch(() => '');
  if (current === text) continue;
  if (check) {
    process.stderr.write(`dashboards: ${file} is out of date; run npm run dashboards\n`);
    stale++;
  } else {
    await writeFile(url, text);
    process.stdout.write(`dashboards: wrote dashboards/json/${file}\n`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
