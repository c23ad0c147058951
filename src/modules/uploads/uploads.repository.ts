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
}
