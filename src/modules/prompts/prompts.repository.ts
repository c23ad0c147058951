import type { Kysely, Selectable } from 'kysely';
import type { DB, PromptsTable } from '../../db/schema.ts';

export type PromptRow = Selectable<PromptsTable>;

export class PromptsRepository {
  constructor(private readonly db: Kysely<DB>) {}

  find(organizationId: number, type: string): Promise<PromptRow | undefined> {
    return this.db.selectFrom('prompts').selectAll().where('organization_id', '=', organizationId).where('type', '=', type).executeTakeFirst();
  }

  /** Inserts unless the organization already has a prompt of that type; undefined when it had one. */
  insertIfAbsent(row: { organization_id: number; type: string; content: string; cta_link: string; created_at: number; updated_at: number }) {
    return this.db
      .insertInto('prompts')
      .values(row)
      .onConflict((oc) => oc.columns(['organization_id', 'type']).doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  update(organizationId: number, type: string, changes: { content: string; cta_link: string; updated_at: number }) {
    return this.db.updateTable('prompts').set(changes).where('organization_id', '=', organizationId).where('type', '=', type).returningAll().executeTakeFirst();
  }

  delete(organizationId: number, type: string) {
    return this.db.deleteFrom('prompts').where('organization_id', '=', organizationId).where('type', '=', type).returningAll().executeTakeFirst();
  }
}
