/**
 * What a ZooKeeper server has written to its data dir (`<dataDir>/version-2`): the bytes of its
 * transaction log records and of its snapshots.
 *
 * The transaction log files are preallocated (64 MiB, sparse), so their size says nothing; the
 * meter walks their records instead. A log file is a 16-byte header (magic, version, dbid), then
 * records of `crc (8 bytes) · length (4, big-endian) · txn (length bytes) · 0x42`; the zeros of the
 * preallocation (length 0) end it. Each file is read from where the last reading stopped, so a
 * reading costs the bytes appended since. A reading can stop at a Zxid (each record's transaction
 * header holds it: client id, cxid, then the zxid), so that it counts exactly the transactions a
 * `srvr` Zxid read just before covers. Snapshots are counted by their files' sizes (one being
 * written counts what it has so far).
 *
 * A record's transaction is jute: a header (client id 8 bytes, cxid 4, zxid 8, time 8, type 4),
 * then the body of its type; a setData's body is `path` (int length, UTF-8), `data` (int length,
 * bytes; −1 for none) and `version`. Each record walked can be handed to a visitor with its zxid,
 * type, size and, for a setData, the path and data written — so a reader can say what a span of
 * the log was for (cost/zk-ledger.ts).
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Totals since the server started. */
export interface ZkDiskTotals {
  /** Bytes of transaction log records (headers of the files excluded). */
  logBytes: number;
  /** Transaction log records. */
  logRecords: number;
  /** Bytes of all snapshot files. */
  snapshotBytes: number;
  snapshots: number;
}

/** One transaction log record, as handed to a {@link ZkDiskMeter}'s visitor. */
export interface ZkLogRecord {
  zxid: number;
  /** ZooKeeper's OpCode of the transaction: 1 create, 2 delete, 5 setData, 14 multi, −1 error, −10 createSession, −11 closeSession, … */
  type: number;
  /** The record's bytes in the log, its frame included. */
  bytes: number;
  /** For a setData: the node written and its new data (a copy; null for none). */
  setData?: { path: string; data: Buffer | null };
}

/** OpCode of a setData transaction. */
const SET_DATA = 5;
const HEADER = 16;
/** A transaction's header: client id, cxid, zxid, time, type. */
const TXN_HEADER = 32;
const END_OF_RECORD = 0x42;
const CHUNK = 1 << 20;

/** Reads a ZooKeeper data dir's totals, incrementally (see the module's note). */
export class ZkDiskMeter {
  private readonly files = new Map<string, { end: number; bytes: number; records: number }>();

  /** `onRecord` sees each record once, in log order, as a reading walks past it. */
  constructor(private readonly versionDir: string, private readonly onRecord?: (record: ZkLogRecord) => void) {}

  /** Totals up to the record of Zxid `upTo` (default: all written). */
  read(upTo = Number.MAX_SAFE_INTEGER): ZkDiskTotals {
    const totals: ZkDiskTotals = { logBytes: 0, logRecords: 0, snapshotBytes: 0, snapshots: 0 };
    for (const name of readdirSync(this.versionDir)) {
      const path = join(this.versionDir, name);
      if (name.startsWith('snapshot.')) {
        totals.snapshots += 1;
        totals.snapshotBytes += statSync(path).size;
      } else if (name.startsWith('log.')) {
        const f = this.files.get(name) ?? { end: HEADER, bytes: 0, records: 0 };
        this.walk(path, f, upTo);
        this.files.set(name, f);
        totals.logBytes += f.bytes;
        totals.logRecords += f.records;
      }
    }
    return totals;
  }

  private walk(path: string, f: { end: number; bytes: number; records: number }, upTo: number): void {
    const fd = openSync(path, 'r');
    try {
      let buf = Buffer.alloc(CHUNK);
      for (;;) {
        const got = readSync(fd, buf, 0, buf.length, f.end);
        let at = 0;
        while (at + 12 <= got) {
          const length = buf.readInt32BE(at + 8);
          if (length <= 0) return; // the preallocated zeros: the end of the log
          const size = 8 + 4 + length + 1;
          if (at + size > got) break; // past this chunk (or not all written yet)
          if (buf[at + size - 1] !== END_OF_RECORD) return; // being written
          const zxid = length >= 20 ? Number(buf.readBigInt64BE(at + 24)) : 0;
          if (zxid > upTo) return; // after the Zxid asked for
          if (this.onRecord && length >= TXN_HEADER) this.onRecord(describe(buf, at + 12, length, zxid, size));
          at += size;
          f.end += size;
          f.bytes += size;
          f.records += 1;
        }
        if (at === 0) {
          // Not one whole record in the chunk: a record larger than the chunk, or the log's end.
          if (got < buf.length) return;
          buf = Buffer.alloc(buf.length * 2);
        }
      }
    } finally {
      closeSync(fd);
    }
  }
}

/** The record whose transaction (header and body) is `buf[txn, txn + length)`. */
function describe(buf: Buffer, txn: number, length: number, zxid: number, bytes: number): ZkLogRecord {
  const type = buf.readInt32BE(txn + 28);
  const record: ZkLogRecord = { zxid, type, bytes };
  if (type !== SET_DATA) return record;
  const end = txn + length;
  let at = txn + TXN_HEADER;
  const pathLength = at + 4 <= end ? buf.readInt32BE(at) : -1;
  if (pathLength < 0 || at + 4 + pathLength + 4 > end) return record; // not a body this reader knows
  const path = buf.toString('utf8', at + 4, at + 4 + pathLength);
  at += 4 + pathLength;
  const dataLength = buf.readInt32BE(at);
  if (dataLength > end - at - 4) return record;
  record.setData = { path, data: dataLength < 0 ? null : Buffer.from(buf.subarray(at + 4, at + 4 + dataLength)) };
  return record;
}
