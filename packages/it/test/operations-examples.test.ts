// The deployment examples of docs/operations.md are checked, not just shown: the systemd units pass
// `systemd-analyze verify` (with the checkout standing in for /opt/orrery, this Node for
// /usr/bin/node), and every metric the Prometheus rules use is one the processes export
// (docs/metrics.md lists them all).
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const EXAMPLES = join(REPO, 'docs', 'examples');

const hasSystemdAnalyze = await run('systemd-analyze', ['--version']).then(() => true, () => false);
if (!hasSystemdAnalyze) console.log('[operations-examples] systemd-analyze not found: the units are not verified here');

describe('docs/examples', () => {
  it.skipIf(!hasSystemdAnalyze)('the systemd units pass systemd-analyze verify, with no warning', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orrery-units-'));
    const units: string[] = [];
    for (const file of readdirSync(join(EXAMPLES, 'systemd')).filter((f) => f.endsWith('.service'))) {
      const text = readFileSync(join(EXAMPLES, 'systemd', file), 'utf8').replaceAll('/opt/orrery/', REPO).replaceAll('/usr/bin/node', process.execPath);
      // A template is verified as one of its instances.
      const name = file.replace('@.service', '@shop.service');
      writeFileSync(join(dir, name), text);
      units.push(name);
    }
    expect(units.sort()).toEqual(['orrery-console.service', 'orrery-executor@shop.service', 'orrery-sharding.service']);
    const result = await run('systemd-analyze', ['verify', '--man=no', ...units], { cwd: dir }).then(
      (r) => ({ code: 0, out: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(result).toEqual({ code: 0, out: '' });
    // The check bites: a unit with a wrong key is refused the same way.
    copyFileSync(join(dir, 'orrery-sharding.service'), join(dir, 'broken.service'));
    writeFileSync(join(dir, 'broken.service'), readFileSync(join(dir, 'broken.service'), 'utf8').replace('Restart=on-failure', 'Restart=sometimes'));
    const broken = await run('systemd-analyze', ['verify', '--man=no', 'broken.service'], { cwd: dir }).then((r) => r.stdout + r.stderr, (e: { stdout: string; stderr: string }) => e.stdout + e.stderr);
    expect(broken).toContain('restart specifier');
  });

  it('the Prometheus rules parse and use only metrics Orrery exports', () => {
    const rules = parseYaml(readFileSync(join(EXAMPLES, 'prometheus', 'orrery-alerts.yml'), 'utf8')) as { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> };
    const exported = new Set(readFileSync(join(REPO, 'docs', 'metrics.md'), 'utf8').match(/orrery_[a-z_]+/g));
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.length).toBeGreaterThan(0);
    for (const rule of all) {
      const used = (rule.expr.match(/orrery_[a-z_]+/g) ?? []).map((m) => m.replace(/_(bucket|count|sum)$/, ''));
      expect(used.length, rule.alert).toBeGreaterThan(0);
      for (const metric of used) expect(exported.has(metric), `${rule.alert}: ${metric}`).toBe(true);
    }
  });
});
