#!/usr/bin/env node
// Installed entry point. The package ships compiled JavaScript in dist/ (built from src/ by
// `npm run build`, which `prepack` runs), so an installed trajwatch runs on any Node the
// package's `engines` names, without type stripping. A checkout runs src/ directly instead
// (`npm run -s trajwatch -- <command>`, on the project's Node 24).
try {
  await import('../dist/cli/main.js');
} catch (err) {
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/main.js')) {
    process.stderr.write('trajwatch: dist/ is not built; run `npm run build` (or, in a checkout, `npm run -s trajwatch -- <command>`)\n');
    process.exit(2);
  }
  throw err;
}
