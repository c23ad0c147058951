/**
 * Tables that no cached read ever reads (src/db/read-cache.ts): writes to them do not move the change
 * clock, so that a stream of viewers' reports does not empty every cached read of every organization.
 * A table belongs here only while no `cachedRead` loads from it (`grep -rn "cachedRead(" src` lists them).
 */
export const UNCACHED_TABLES = [
  'analytics_events',
  'analytics_days',
  'analytics_player_hours',
  'analytics_retention_days',
  'analytics_org_days',
  'analytics_cta_days',
  'analytics_breakdown_days',
  'analytics_rollup',
  'analytics_identified',
  'analytics_identified_players',
  // Background jobs' bookkeeping: a job claimed, finished or queued (a rollup every 30 s) changes no cached read.
  'jobs',
  'job_subjects',
  // Written beside each webhook message's job (a viewer's report may cause one).
  'webhook_deliveries',
  'housekeeping_tasks',
  'rate_limits',
  // Read by every signed-in request, uncached: a sign-in or sign-out changes no cached read.
  'user_sessions',
  'user_links',
  'user_passwords',
  'stored_objects',
] as const;

// `lock table`: settledMaxId (src/db/dialect.ts) locks analytics_events, which changes nothing.
const STATEMENT = new RegExp(`^\\s*(insert\\s+into|update|delete\\s+from|lock\\s+table)\\s+"(${UNCACHED_TABLES.join('|')})"`, 'i');

/** Whether a statement (as Kysely compiles it) writes (or locks) only an uncached table. */
export function writesOnlyUncached(sql: string): boolean {
  return STATEMENT.test(sql);
}
