// Shared pieces of the chaos suite: a ledger shell job, reading who runs what from the ledger, a
// webhook receiver, and the checker's verdict printed per scenario.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { eventually } from '@orrery/core/testing';
import type { JobConfigInput } from '@orrery/core';
import { checkLedger, ledgerCommand, readLedger, type LedgerExpectation, type LedgerReport, type LedgerRun } from '../src/run-ledger.js';

/** A shell job that writes START / TICK / END lines to `ledger` for `seconds` per run. */
export function ledgerJob(name: string, ledger: string, extra: Partial<JobConfigInput> & { seconds?: number } = {}): JobConfigInput {
  const { seconds = 0.5, ...rest } = extra;
  return {
    name, type: 'shell', cron: '* * * * * *', shardingTotalCount: 3, failover: true, overlap: 'skip', misfire: { policy: 'skip' },
    timeoutSeconds: 0, command: ledgerCommand(ledger, seconds), enabled: true, ...rest,
  } as JobConfigInput;
}

/** Runs of `executor` that started and have not ended (as the ledger says now). */
export function inProgress(ledger: string, executor: string): LedgerRun[] {
  return readLedger(ledger).runs.filter((r) => r.executor === executor && !r.ended);
}

/** Waits until `executor` has a run in progress; resolves it. */
export async function waitRunning(ledger: string, executor: string, timeoutMs = 15_000): Promise<LedgerRun> {
  let run: LedgerRun | undefined;
  await eventually(() => {
    run = inProgress(ledger, executor).find((r) => Date.now() - r.start < 300);
    expect(run).toBeDefined();
  }, { timeoutMs, intervalMs: 20 });
  return run!;
}

/**
 * Waits until the ledger shows the failover re-run of `run`'s fire (same item and fire time,
 * trigger `failover`) — by `executor`, when given; resolves it.
 */
export async function waitFailoverRerun(ledger: string, run: LedgerRun, options: { executor?: string; timeoutMs?: number } = {}): Promise<LedgerRun> {
  let rerun: LedgerRun | undefined;
  await eventually(() => {
    rerun = readLedger(ledger).runs.find((r) => r.trigger === 'failover' && r.item === run.item && r.fireTime === run.fireTime);
    expect(rerun).toBeDefined();
    if (options.executor !== undefined) expect(rerun!.executor).toBe(options.executor);
  }, { timeoutMs: options.timeoutMs ?? 30_000, intervalMs: 50 });
  return rerun!;
}

/** Every whole second in [from, to): the fire times of a `* * * * * *` job. */
export function everySecond(from: number, to: number): number[] {
  const out: number[] = [];
  for (let t = Math.ceil(from / 1000) * 1000; t < to; t += 1000) out.push(t);
  return out;
}

/** Checks the ledger and asserts the safety properties; returns the report for the scenario's own asserts. */
export function assertLedger(ledger: string, expectations: LedgerExpectation[], faults: Array<[number, number]>, label: string): LedgerReport {
  const { runs, badLines } = readLedger(ledger);
  const report = checkLedger(runs, expectations, faults);
  // The counts of each scenario, for the closing note and for anyone reading the test log.
  console.log(`[chaos] ${label}: runs ${report.runs}, overlaps ${report.overlaps.length}, duplicates ${report.duplicates.length}, failover re-runs ${report.failoverReruns} (${report.rerunsOfEnded} of a run whose outcome was lost), token violations ${report.tokenViolations.length}, missed ${report.missed.length}, missed inside fault windows ${report.missedInFaults}`);
  expect(badLines).toBe(0);
  expect(report.overlaps).toEqual([]);
  expect(report.duplicates).toEqual([]);
  expect(report.tokenViolations).toEqual([]);
  expect(report.missed).toEqual([]);
  return report;
}

/** A local HTTP server that records the JSON bodies POSTed to it. */
export interface WebhookReceiver {
  url: string;
  bodies: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const bodies: Array<Record<string, unknown>> = [];
  const server: Server = createServer((req, res) => {
    let data = '';
    req.on('data', (c: Buffer) => (data += c.toString('utf8')));
    req.on('end', () => {
      try {
        bodies.push(JSON.parse(data) as Record<string, unknown>);
      } catch {
        bodies.push({ unparsable: data });
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Pids of the live (not zombie) processes in process group `pgid`, read from /proc. */
export function liveGroupMembers(pgid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(group) === pgid && state !== 'Z' && state !== 'X') pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
