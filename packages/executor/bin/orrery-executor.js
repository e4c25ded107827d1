#!/usr/bin/env node
// orrery-executor: runs the shards it owns (TypeScript sources run through tsx).
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/main.ts');
process.exit(await main(process.argv.slice(2)));
