import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, UploadsTable } from '../../db/schema.ts';

export type UploadRow = Selectable<UploadsTable>;

/** Only queries. Uploads are looked up by their capability id (any organization): the secret decides. */
export class UploadsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new UploadsRepository(db);
  }

  insert(row: Insertable<UploadsTable>): Promise<UploadRow> {
    return this.db.insertInto('uploads').values(row).returningAll().executeTakeFirstOrThrow();
  }

  find(id: string): Promise<UploadRow | undefined> {
    return this.db.selectFrom('uploads').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The video's upload that brought its source (complete or stored), if any. */
  sourceOf(videoId: number): Promise<UploadRow | undefined> {
    return this.db
      .selectFrom('uploads')
      .selectAll()
      .where('video_id', '=', videoId)
      .where('status', 'in', ['complete', 'stored'])
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
  }

  /** Moves an upload from status `from`; undefined when it was not in it (someone else moved it first). */
  moveStatus(id: string, from: string, changes: Updateable<UploadsTable>): Promise<UploadRow | undefined> {
    return this.db.updateTable('uploads').set(changes).where('id', '=', id).where('status', '=', from).returningAll().executeTakeFirst();
  }

  // ---- upload locks (src/modules/uploads/upload-locker.ts) ----

  /** Takes the lock when it is free or its holder's lease ran out; answers whether `owner` holds it now. */
  async tryLock(id: string, owner: string, now: number, leaseMs: number): Promise<boolean> {
    const row = await this.db
      .insertInto('upload_locks')
      .values({ id, owner, expires_at: now + leaseMs, release_requested: 0 })
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet({ owner, expires_at: now + leaseMs, release_requested: 0 })
          .where('upload_locks.expires_at', '<', now),
      )
      .returning('owner')
      .executeTakeFirst();
    return row?.owner === owner;
  }

  async requestRelease(id: string): Promise<void> {
    await this.db.updateTable('upload_locks').set({ release_requested: 1 }).where('id', '=', id).execute();
  }

  /** Extends a held lock; answers whether its release was asked for, or null when it is no longer held. */
  async renewLock(id: string, owner: string, expiresAt: number): Promise<boolean | null> {
    const row = await this.db
      .updateTable('upload_locks')
      .set({ expires_at: expiresAt })
      .where('id', '=', id)
      .where('owner', '=', owner)
      .returning('release_requested')
      .executeTakeFirst();
    return row ? Boolean(row.release_requested) : null;
  }

  async unlock(id: string, owner: string): Promise<void> {
    await this.db.deleteFrom('upload_locks').where('id', '=', id).where('owner', '=', owner).execute();
  }
}
