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

const HEADER = 16;
const END_OF_RECORD = 0x42;
const CHUNK = 1 << 20;

/** Reads a ZooKeeper data dir's totals, incrementally (see the module's note). */
export class ZkDiskMeter {
  private readonly files = new Map<string, { end: number; bytes: number; records: number }>();

  constructor(private readonly versionDir: string) {}

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
          if (length >= 20 && Number(buf.readBigInt64BE(at + 24)) > upTo) return; // after the Zxid asked for
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
