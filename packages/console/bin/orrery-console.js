#!/usr/bin/env node
// orrery-console: the console API server (the bundled build when fresh, else the TypeScript sources).
import { loadEntry } from '@orrery/core/launch';

const { main } = await loadEntry(import.meta.url, { built: 'server.js', source: '../src/server/main.ts' });
process.exit(await main(process.argv.slice(2)));
