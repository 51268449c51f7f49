#!/usr/bin/env node
// Installed entry point: runs the TypeScript sources directly (Node >= 24 strips types natively).
import '../src/cli/main.ts';
