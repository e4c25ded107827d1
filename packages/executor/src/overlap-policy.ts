/**
 * The overlap rule (pure): what a fire of an item does when the item may still be running.
 *
 * | situation \ trigger | cron, misfire, retry | run-now, downstream | failover |
 * |---|---|---|---|
 * | idle here | run | run | run |
 * | running here | the policy: `skip` skip, `queue` queue, `replace` replace | queue | queue |
 * | running on another executor | `skip` skip, else wait (then claim once more) | wait | skip |
 *
 * - A run someone asked for (run-now, downstream) is never dropped because the item is busy: it
 *   waits behind the running run whatever the policy (at most one waits per item; a newer one
 *   replaces it, and the replaced one is reported).
 * - A failover re-run waits for what still runs here (a fenced run being killed — perhaps the very
 *   run it replaces); its claim succeeds only from the failover mark — so once another executor
 *   holds the item the mark is gone, and there is nothing left to re-run.
 * - `running on another executor` is a claim refused because another executor holds the item (a
 *   shard that just moved): the fire waits for that run to end, then claims once more.
 *
 * Guarantees: total over policy × trigger × situation; no I/O, no clock.
 */
import type { Trigger } from './misfire-rule.js';
import { isRequested } from './misfire-rule.js';

/** A job's overlap policy (its config's `overlap`). */
export type OverlapPolicy = 'skip' | 'queue' | 'replace';

/** Where the item's previous run is, as far as this executor knows. */
export type OverlapSituation = 'idle' | 'running-here' | 'running-elsewhere';

/** What the fire does. */
export type OverlapDecision = 'run' | 'skip' | 'queue' | 'replace' | 'wait';

/** Which waiting slot a queued fire takes: requested runs and scheduled ones wait apart. */
export type QueueSlot = 'requested' | 'scheduled';

export function decideOverlap(policy: OverlapPolicy, trigger: Trigger, situation: OverlapSituation): OverlapDecision {
  if (situation === 'idle') return 'run';
  if (situation === 'running-elsewhere') {
    if (trigger === 'failover') return 'skip';
    return isRequested(trigger) || policy !== 'skip' ? 'wait' : 'skip';
  }
  if (isRequested(trigger) || trigger === 'failover') return 'queue';
  switch (policy) {
    case 'skip':
      return 'skip';
    case 'queue':
      return 'queue';
    case 'replace':
      return 'replace';
  }
}

/** The slot a fire of `trigger` waits in: one requested and one scheduled fire may wait per item. */
export function queueSlot(trigger: Trigger): QueueSlot {
  return isRequested(trigger) || trigger === 'failover' ? 'requested' : 'scheduled';
}
