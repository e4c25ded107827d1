/**
 * What ZooKeeper's transactions around a cost window were for, so that "transactions per run"
 * counts the window's runs whole rather than wherever two Zxid reads happen to cut the log.
 *
 * A run of a shard writes its shard node twice: the claim (state `running`, with its fire time) and
 * the completion (state `idle`, with the run's outcome and its fire time in `last`). Under load the
 * completions of the fire before a window can still be arriving when the window's first sample is
 * taken, and the last fire's completions after its second — an interval cut by Zxid then holds a
 * few hundred writes that belong to other fires, or misses some of its own, and read 1.96–2.04.
 * The ledger instead sees every record of the log (as {@link ZkDiskMeter} walks it) and attributes
 * each shard write to its fire by the data written; anything else (another node, a multi, an error
 * transaction, a session) is "other", and counts where it falls. So for a window of fires
 * [start, end) and its sampled Zxid interval (from, to]:
 *
 *   transactions = shard writes whose fire is in the window (wherever they fall in the log)
 *                + other transactions in (from, to]
 *
 * which is every write the window's runs made plus everything else ZooKeeper did meanwhile. A
 * second claim of a fire, a failover marking or a retried write counts, as it should; only writes
 * of fires outside the window are left out (reported, as `edge`).
 */
import { checkShardState, matchPath } from '@orrery/core';
import type { ZkLogRecord } from './zk-log.js';

/** A window's transactions, by what they were for (see the module's note). */
export interface WindowTransactions {
  /** Shard claims (state running) of the window's fires. */
  claims: number;
  /** Shard completions (state idle) of the window's fires. */
  completions: number;
  /** Other shard writes of the window's fires (failover markings). */
  otherShardWrites: number;
  /** Transactions in the sampled interval that are not a shard write with a fire time. */
  other: number;
  /** Shard writes in the sampled interval that belong to fires outside the window (not counted). */
  edge: number;
  /** claims + completions + otherShardWrites + other. */
  total: number;
  /** Log bytes of the transactions in `total`. */
  bytes: number;
}

interface Entry { zxid: number; bytes: number; fire: number | undefined; state: string | undefined }

/** Shard writes attributed to their fires, for the records a {@link ZkDiskMeter} walks (see the module's note). */
export class TransactionLedger {
  private entries: Entry[] = [];
  private root = '';

  /** The visitor to hand to a {@link ZkDiskMeter}. */
  readonly onRecord = (record: ZkLogRecord): void => {
    const shard = record.setData ? this.shardWrite(record.setData.path, record.setData.data) : undefined;
    this.entries.push({ zxid: record.zxid, bytes: record.bytes, fire: shard?.fire, state: shard?.state });
  };

  /**
   * Forgets every record seen so far: a step starts afresh, its namespaces under `root` (the
   * ZooKeeper root of its processes, '' or '/…').
   */
  begin(root: string): void {
    this.entries = [];
    this.root = root === '/' ? '' : root;
  }

  /** Completions of fires in [start, end) seen so far. */
  completions(start: number, end: number): number {
    return this.entries.filter((e) => e.state === 'idle' && e.fire !== undefined && e.fire >= start && e.fire < end).length;
  }

  /** The transactions of the fires in [start, end) with those sampled in the Zxid interval (from, to]. */
  tally(start: number, end: number, from: number, to: number): WindowTransactions {
    const t: WindowTransactions = { claims: 0, completions: 0, otherShardWrites: 0, other: 0, edge: 0, total: 0, bytes: 0 };
    for (const e of this.entries) {
      const sampled = e.zxid > from && e.zxid <= to;
      let counted = false;
      if (e.fire === undefined) {
        if (sampled) { t.other += 1; counted = true; }
      } else if (e.fire >= start && e.fire < end) {
        if (e.state === 'running') t.claims += 1;
        else if (e.state === 'idle') t.completions += 1;
        else t.otherShardWrites += 1;
        counted = true;
      } else if (sampled) {
        t.edge += 1;
      }
      if (counted) { t.total += 1; t.bytes += e.bytes; }
    }
    return t;
  }

  /** The fire time and state a write to a shard node carries; undefined for any other write. */
  private shardWrite(path: string, data: Buffer | null): { fire: number | undefined; state: string } | undefined {
    if (!path.startsWith(`${this.root}/`) || data === null) return undefined;
    if (matchPath(path.slice(this.root.length))?.kind !== 'job-shard') return undefined;
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString('utf8'));
    } catch {
      return undefined;
    }
    const r = checkShardState(raw);
    if (!r.ok) return undefined;
    const s = r.value;
    return { state: s.state, fire: s.state === 'idle' ? s.last?.fireTime : s.fireTime };
  }
}
