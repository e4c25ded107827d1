#!/usr/bin/env node
// orrery-sharding: the sharding allocator (the bundled build when fresh, else the TypeScript sources).
import { loadEntry } from '@orrery/core/launch';

const { main } = await loadEntry(import.meta.url, { built: 'main.js', source: '../src/main.ts' });
process.exit(await main(process.argv.slice(2)));
