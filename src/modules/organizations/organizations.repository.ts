import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';

export class OrganizationsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  insert(row: { name: string; parent_id?: number | null; created_at: number; updated_at: number }) {
    return this.db.insertInto('organizations').values(row).returningAll().executeTakeFirstOrThrow();
  }

  findById(id: number) {
    return this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('organizations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }
}
