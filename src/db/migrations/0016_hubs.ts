import type { Kysely } from 'kysely';
import { bigint, notNullDefault, withId } from '../dialect.ts';

/**
 * Hubs (docs/hubs.md): an organization's public collection of players, grouped in ordered categories.
 * A hub's slug is unique across the server (it names the public page); a category's within its hub.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('hubs'))
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text')
    .addColumn('public', 'boolean', notNullDefault(true))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('hubs_organization_idx').on('hubs').columns(['organization_id', 'id']).execute();

  await withId(db, db.schema.createTable('hub_categories'))
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('hub_id', 'integer', (c) => c.notNull().references('hubs.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('hub_categories_hub_slug_unique', ['hub_id', 'slug'])
    .execute();

  await db.schema
    .createTable('hub_category_players')
    .addColumn('category_id', 'integer', (c) => c.notNull().references('hub_categories.id').onDelete('cascade'))
    .addColumn('player_id', 'integer', (c) => c.notNull().references('players.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('hub_category_players_pk', ['category_id', 'player_id'])
    .execute();
  await db.schema.createIndex('hub_category_players_player_idx').on('hub_category_players').column('player_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('hub_category_players').execute();
  await db.schema.dropTable('hub_categories').execute();
  await db.schema.dropTable('hubs').execute();
}
