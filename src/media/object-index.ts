import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

/**
 * The keys an object store holds, kept beside it so that a folder (`videos/<uuid>`, `live/<uuid>`)
 * is deleted without listing the bucket: S3 has no delete by prefix, and a listing is slow, costly
 * and, on some S3-compatible stores, late to show what was just written. A key is recorded before
 * its object is written, and forgotten after the object is deleted, so that no object exists without
 * its key (a key may outlive a write that failed: deleting a missing object is fine).
 */
export interface ObjectIndex {
  record(key: string): Promise<void>;
  recordMany(keys: string[]): Promise<void>;
  /** Up to `limit` recorded keys that are `prefix` itself or under `prefix/`, in key order. */
  under(prefix: string, limit: number): Promise<string[]>;
  forget(keys: string[]): Promise<void>;
  /** Whether the keys of objects written before the index existed have been recorded (S3FileStore.indexExisting). */
  isComplete(): Promise<boolean>;
  markComplete(): Promise<void>;
}

/** Never a media key (keys do not start with a dot): marks the index as holding every key of the store. */
const COMPLETE = '.complete';

/** The index in the database (table stored_objects). */
export class ObjectIndexRepository implements ObjectIndex {
  constructor(private readonly db: Kysely<DB>) {}

  async record(key: string): Promise<void> {
    await this.db
      .insertInto('stored_objects')
      .values({ key, created_at: Math.floor(Date.now() / 1000) })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
  }

  async recordMany(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const now = Math.floor(Date.now() / 1000);
    await this.db
      .insertInto('stored_objects')
      .values(keys.map((key) => ({ key, created_at: now })))
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
  }

  async under(prefix: string, limit: number): Promise<string[]> {
    // One range of the primary key, [prefix, prefix + '0'): '0' follows '/'. Within it, the keys
    // between prefix and prefix/ (`prefix-x`, `prefix.x`) are another folder's.
    const rows = await this.db
      .selectFrom('stored_objects')
      .select('key')
      .where('key', '>=', prefix)
      .where('key', '<', `${prefix}0`)
      .where((eb) => eb.or([eb('key', '=', prefix), eb('key', '>=', `${prefix}/`)]))
      .orderBy('key')
      .limit(limit)
      .execute();
    return rows.map((r) => r.key);
  }

  async forget(keys: string[]): Promise<void> {
    if (keys.length > 0) await this.db.deleteFrom('stored_objects').where('key', 'in', keys).execute();
  }

  async isComplete(): Promise<boolean> {
    return (await this.db.selectFrom('stored_objects').select('key').where('key', '=', COMPLETE).executeTakeFirst()) !== undefined;
  }

  async markComplete(): Promise<void> {
    await this.record(COMPLETE);
  }
}
