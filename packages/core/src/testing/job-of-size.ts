/**
 * A job config whose stored JSON is exactly `bytes` long (for tests of the size limit): the base
 * config, padded with `shardingItemParameters` values (the only field that can reach the limit).
 */
import { checkJobConfig, type JobConfig, type JobConfigInput } from '../schemas/job-config.js';

export function jobConfigOfSize(bytes: number, base: JobConfigInput): Record<string, unknown> {
  const shards = 100;
  const input: Record<string, unknown> = { ...base, shardingTotalCount: shards, shardingItemParameters: {} };
  const size = (value: Record<string, unknown>): number => {
    // The stored form: every default filled in (checked without the size rule: measure, then pad).
    const r = checkJobConfig({ ...value, shardingItemParameters: {} });
    if (!r.ok) throw new Error(`the base config is invalid: ${r.issues[0]?.message}`);
    const stored: JobConfig = { ...r.value, shardingItemParameters: value.shardingItemParameters as Record<string, string> };
    return Buffer.byteLength(JSON.stringify(stored));
  };
  const params: Record<string, string> = {};
  input.shardingItemParameters = params;
  for (let item = 0; item < shards && size(input) < bytes; item += 1) {
    params[String(item)] = '';
    const missing = bytes - size(input);
    params[String(item)] = 'x'.repeat(Math.max(0, Math.min(4096, missing)));
  }
  if (size(input) !== bytes) throw new Error(`could not pad a job config to ${bytes} bytes (got ${size(input)})`);
  return input;
}
