/**
 * How early an executor claims a cron fire's shards. A claim is one ZooKeeper write; when many jobs
 * fire in the same instant, their claims queue behind each other and the last ones return tens or
 * hundreds of milliseconds later (and a shell run's process, started at its gate right after its
 * claim, adds a few milliseconds more per run of the burst: that counts too). Claiming that much ahead of the fire time — and starting the run on
 * the dot — takes the claim out of the run's lateness. The lead follows the slowest claim of the
 * last 20 fires (× 2, plus 20 ms: ZooKeeper's fsyncs make single claims slow now and then), between
 * `minLeadMs` (default 20) and `maxLeadMs` (800); a job never claims earlier than 60 % of its
 * period ahead. Until it has seen a claim it leads by `maxLeadMs`: an executor that starts with
 * many jobs makes all their first claims in the same instant, the slowest of any fire.
 *
 * Claiming early changes nothing else: the shard is `running` (claimed) from the claim on, the
 * overlap policy still applies at the fire time to an item still running here, and a claim whose
 * run never starts (the job was disabled, the item moved) is given back.
 */
export interface ClaimLead {
  leadMs(): number;
  readonly maxLeadMs: number;
  /** A cron claim for `fireTime` took `latencyMs`. */
  observe(fireTime: number, latencyMs: number): void;
}

export function createClaimLead(options: { initialMs?: number; minLeadMs?: number; maxLeadMs?: number; window?: number } = {}): ClaimLead {
  const maxLeadMs = Math.max(options.maxLeadMs ?? 800, options.minLeadMs ?? 0);
  const minLeadMs = options.minLeadMs ?? 20;
  const window = options.window ?? 20;
  const slowest = new Map<number, number>();
  let lead = Math.max(minLeadMs, options.initialMs ?? maxLeadMs);
  return {
    maxLeadMs,
    leadMs: () => lead,
    observe(fireTime, latencyMs) {
      slowest.set(fireTime, Math.max(slowest.get(fireTime) ?? 0, latencyMs));
      while (slowest.size > window) slowest.delete(slowest.keys().next().value as number);
      const worst = Math.max(...slowest.values());
      lead = Math.min(maxLeadMs, Math.max(minLeadMs, Math.ceil(worst * 2) + 20));
    },
  };
}
