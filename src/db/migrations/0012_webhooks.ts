import type { Kysely } from 'kysely';
import { bigint, withId } from '../dialect.ts';

/**
 * Registered webhooks of an organization (docs/webhooks.md): `kind` 'analytics' (view,
 * identified_view, attention_span) or 'players' (videofacade_* and playlist_* × create, update,
 * destroy). `security_key` signs deliveries (Standard Webhooks) and is echoed in analytics payloads.
 * `organizations.webhook_signing_key` signs the others (video and GDPR webhooks).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('webhooks'))
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('security_key', 'text', (c) => c.notNull())
    .addColumn('event_subscriptions', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhooks_organization_kind_idx').on('webhooks').columns(['organization_id', 'kind', 'id']).execute();
  // Signs the webhooks that have no key of their own (a video's webhook_url, a GDPR request's webhook).
  await db.schema.alterTable('organizations').addColumn('webhook_signing_key', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('organizations').dropColumn('webhook_signing_key').execute();
  await db.schema.dropTable('webhooks').execute();
}
