#!/usr/bin/env node
// The `orrery` admin CLI: TypeScript sources run through tsx.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
process.exit(code);
