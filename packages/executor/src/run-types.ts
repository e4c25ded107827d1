/** What both runners (shell and Node) take and give. */
import type { RunStatus } from '@orrery/core';

/** Where a run's output goes and how long it may take. */
export interface RunIo {
  /** Full stdout and stderr are appended to these files. */
  stdoutPath: string;
  stderrPath: string;
  /** 0: no timeout. */
  timeoutMs: number;
  /** Between SIGTERM and SIGKILL on timeout or stop, in ms. */
  killGraceMs: number;
  /**
   * Bytes of each stream kept in its log file; past it the output is discarded and the log ends
   * with a marker line. Default 64 MiB (`DEFAULT_MAX_LOG_BYTES`).
   */
  maxLogBytes?: number;
}

/** Bytes discarded past the log cap, per stream (absent: nothing was). */
export interface LogTruncation {
  stdout?: number;
  stderr?: number;
}

/** How a run ended. */
export interface RunResult {
  status: RunStatus;
  exitCode: number | null;
  /** The signal that ended the process, if any. */
  signal: string | null;
  message: string;
  stdoutTail: string;
  stderrTail: string;
  startedAt: number;
  endedAt: number;
  /** Present when a log reached its cap: the bytes discarded per stream. */
  truncated?: LogTruncation;
  /** Taken back before it started ({@link RunHandle.withdraw}): it never ran. */
  withdrawn?: boolean;
}

/** Why a run is stopped from outside. */
export type StopReason = 'stop' | 'replace' | 'fence' | 'shutdown';

/** A run in progress. */
export interface RunHandle {
  /** The process (group leader) running it. */
  readonly pid: number;
  readonly done: Promise<RunResult>;
  /** Stops the run: SIGTERM to its process group, SIGKILL after the grace (`graceMs`, else the run's own). Outcome `aborted`. */
  stop(reason: StopReason, graceMs?: number): void;
  /** Tells the run whether this executor still owns it (Node jobs see it in `ctx.isOwner()`). */
  setOwner(owner: boolean): void;
  /**
   * Takes the run back if it has not started: `done` then resolves with `withdrawn: true`. A run
   * that started meanwhile goes on as if nothing was asked. Only runs started ahead of their fire
   * time wait to start (a Node run in its worker, a shell run at its gate).
   */
  withdraw?(): void;
}
