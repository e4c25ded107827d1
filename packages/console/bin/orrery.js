#!/usr/bin/env node
// The `orrery` admin CLI (the bundled build when fresh, else the TypeScript sources).
import { loadEntry } from '@orrery/core/launch';

const { main } = await loadEntry(import.meta.url, { built: 'cli.js', source: '../src/cli/main.ts' });
const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
process.exit(code);
