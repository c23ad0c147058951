import type pg from 'pg';
import { whenUsed } from '../lib/when-used.ts';

const load = whenUsed<typeof pg>('pg');
let configured = false;

/**
 * The `pg` driver, loaded when PostgreSQL is first used: with SQLite it is never needed, and it
 * brings `net` and `tls` (~40 ms of a cold start).
 */
export function pgDriver(): typeof pg {
  const driver = load();
  if (!configured) {
    // int8 (bigint) carries our second-precision timestamps and counts; they fit a JS number.
    driver.types.setTypeParser(20, (v) => Number.parseInt(v, 10));
    configured = true;
  }
  return driver;
}
