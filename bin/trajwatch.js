#!/usr/bin/env node
// Installed entry point. The package ships compiled JavaScript in dist/ (built from src/ by
// `npm run build`, which `prepack` runs), so an installed trajwatch runs on any Node the
// package's `engines` names, without type stripping. A checkout runs src/ directly instead
// (`npm run -s trajwatch -- <command>`, on the project's Node 24).
//
// The Node version is checked before anything modern is imported, in syntax old Node still
// parses (no top-level await, no optional chaining): on a Node below `engines` the user reads
// which Node to install, not `Promise.withResolvers is not a function` halfway through a command.
import { readFileSync } from 'node:fs';

var pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
var wanted = /^>=\s*(\d+)\.(\d+)\.(\d+)$/.exec(String(pkg.engines && pkg.engines.node));
var have = process.versions.node.split('.').map(Number);
if (wanted !== null) {
  var need = wanted.slice(1).map(Number);
  var older = have[0] !== need[0] ? have[0] < need[0] : have[1] !== need[1] ? have[1] < need[1] : have[2] < need[2];
  if (older) {
    process.stderr.write(
      'trajwatch: needs Node.js ' +
        need.join('.') +
        ' or newer (package.json engines "' +
        pkg.engines.node +
        '"); ' +
        'this is Node.js ' +
        process.versions.node +
        ' (' +
        process.execPath +
        ').\n' +
        'Install Node.js ' +
        need[0] +
        ' LTS or newer (https://nodejs.org, or `nvm install ' +
        Math.max(need[0], 24) +
        '`) and run trajwatch with it.\n',
    );
    process.exit(1);
  }
}

import('../dist/cli/main.js').catch(function (err) {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/cli/main.js')) {
    process.stderr.write('trajwatch: dist/ is not built; run `npm run build` (or, in a checkout, `npm run -s trajwatch -- <command>`)\n');
    process.exit(2);
  }
  throw err;
});
