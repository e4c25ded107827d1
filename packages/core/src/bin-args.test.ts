import { describe, expect, it } from 'vitest';
import { parseBinArgs } from './bin-args.js';
import { OrreryError } from './errors.js';
import { ORRERY_VERSION } from './version.js';

/** Runs parseBinArgs with `parse`, capturing what it writes. */
function run(argv: string[], parse: () => unknown) {
  let stdout = '';
  let stderr = '';
  const result = parseBinArgs('orrery-x', argv, 'Usage: orrery-x [--flag]\n', parse, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  return { result, stdout, stderr };
}

const HINT = '(orrery-x --help lists every flag, its environment variable and its default)\n';

describe('parseBinArgs', () => {
  it.each([['--version'], ['-V']])('%s prints the version and never parses', (flag) => {
    expect(run(['--bogus', flag], () => { throw new Error('not reached'); })).toEqual({ result: { exit: 0 }, stdout: `orrery-x ${ORRERY_VERSION}\n`, stderr: '' });
  });

  it('--help prints the whole usage on stdout', () => {
    expect(run(['--help'], () => { throw new OrreryError('usage', 'help'); })).toEqual({ result: { exit: 0 }, stdout: 'Usage: orrery-x [--flag]\n', stderr: '' });
  });

  it('a usage error is its line and where the help is, exit 2', () => {
    expect(run(['--bogus'], () => { throw new OrreryError('usage', "Unknown option '--bogus'"); })).toEqual({ result: { exit: 2 }, stdout: '', stderr: `orrery-x: Unknown option '--bogus'\n${HINT}` });
  });

  it('every problem of a config, one line each', () => {
    const issues = [
      { field: '--port', rule: 'range', message: "--port: must be an integer from 0 to 65535 (got 'x')" },
      { field: 'ORRERY_ADMIN_PASSWORD', rule: 'min-length', message: 'ORRERY_ADMIN_PASSWORD: must be at least 8 characters' },
    ];
    const out = run([], () => { throw new OrreryError('usage', issues.map((i) => i.message).join('; '), { details: { issues } }); });
    expect(out).toEqual({ result: { exit: 2 }, stdout: '', stderr: `orrery-x: ${issues[0]!.message}\norrery-x: ${issues[1]!.message}\n${HINT}` });
  });

  it('a good config goes on', () => {
    expect(run(['--flag'], () => ({ flag: true })).result).toEqual({ config: { flag: true } });
  });
});
