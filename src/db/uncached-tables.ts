/**
 * Tables that no cached read ever reads (src/db/read-cache.ts): writes to them do not move the change
 * clock, so that a stream of viewers' reports does not empty every cached read of every organization.
 * A table belongs here only while no `cachedRead` loads from it (only events and tokens are read so).
 */
export const UNCACHED_TABLES = [
  'analytics_events',
  'analytics_days',
  'analytics_org_days',
  'analytics_rollup',
  'analytics_identified',
  'rate_limits',
  'stored_objects',
] as const;

const STATEMENT = new RegExp(`^\\s*(insert\\s+into|update|delete\\s+from)\\s+"(${UNCACHED_TABLES.join('|')})"`, 'i');

/** Whether a statement (as Kysely compiles it) writes only to an uncached table. */
export function writesOnlyUncached(sql: string): boolean {
  return STATEMENT.test(sql);
}
