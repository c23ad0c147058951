import type { Kysely, Selectable, Updateable } from 'kysely';
import type { DB, OrganizationsTable } from '../../db/schema.ts';

export type OrganizationRow = Selectable<OrganizationsTable>;

export class OrganizationsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new OrganizationsRepository(db);
  }

  insert(row: { name: string; parent_id?: number | null; account_id?: number | null; created_at: number; updated_at: number }) {
    return this.db.insertInto('organizations').values(row).returningAll().executeTakeFirstOrThrow();
  }

  findById(id: number) {
    return this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('organizations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  update(id: number, values: Updateable<OrganizationsTable>) {
    return this.db.updateTable('organizations').set(values).where('id', '=', id).returningAll().executeTakeFirst();
  }

  /** The organization `rootId` and all its descendants (a recursive walk down parent_id). */
  private subtree(rootId: number) {
    return this.db
      .withRecursive('tree(id)', (db) =>
        db
          .selectFrom('organizations')
          .select('id')
          .where('id', '=', rootId)
          .union(db.selectFrom('organizations as o').innerJoin('tree', 'tree.id', 'o.parent_id').select('o.id')),
      )
      .selectFrom('organizations')
      .where('organizations.id', 'in', (eb) => eb.selectFrom('tree').select('tree.id'));
  }

  listSubtree(rootId: number, opts?: { limit: number; offset: number }): Promise<OrganizationRow[]> {
    const q = this.subtree(rootId).selectAll('organizations').orderBy('organizations.id');
    return (opts ? q.limit(opts.limit).offset(opts.offset) : q).execute();
  }

  async countSubtree(rootId: number): Promise<number> {
    const row = await this.subtree(rootId)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** True when `id` is `viewerId` or one of its descendants (a recursive walk up parent_id). */
  async isVisible(viewerId: number, id: number): Promise<boolean> {
    if (viewerId === id) return true;
    const row = await this.db
      .withRecursive('up(id, parent_id)', (db) =>
        db
          .selectFrom('organizations')
          .select(['id', 'parent_id'])
          .where('id', '=', id)
          .union(db.selectFrom('organizations as o').innerJoin('up', 'up.parent_id', 'o.id').select(['o.id', 'o.parent_id'])),
      )
      .selectFrom('up')
      .select('up.id')
      .where('up.id', '=', viewerId)
      .executeTakeFirst();
    return row !== undefined;
  }
}
