import type { Kysely } from 'kysely';
import { bigint, notNullDefault, withId } from '../dialect.ts';

const cascade = (table: string) => (c: any) => c.notNull().references(`${table}.id`).onDelete('cascade');

export async function up(db: Kysely<any>): Promise<void> {
  await withId(db, db.schema.createTable('organizations'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('parent_id', 'integer', (c) => c.references('organizations.id').onDelete('set null'))
    .addColumn('account_id', 'integer')
    .addColumn('embed_domain', 'text')
    .addColumn('secure_embed_domain', 'text')
    .addColumn('playback_domain', 'text')
    .addColumn('features', 'text', notNullDefault('{}'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('api_tokens'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('user_id', 'integer')
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();

  await withId(db, db.schema.createTable('players'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text')
    .addColumn('access_code', 'text')
    .addColumn('autoplay', 'boolean', notNullDefault(false))
    .addColumn('sharing_page_comments', 'boolean', notNullDefault(false))
    .addColumn('sharing_page', 'boolean', notNullDefault(true))
    .addColumn('default_hd', 'boolean', notNullDefault(false))
    .addColumn('splash_screen_fade', 'boolean', notNullDefault(false))
    .addColumn('mute_onload', 'boolean', notNullDefault(false))
    .addColumn('height', 'integer', notNullDefault(360))
    .addColumn('width', 'integer', notNullDefault(640))
    .addColumn('playlist_always_open', 'boolean', notNullDefault(false))
    .addColumn('release_date', bigint, notNullDefault(0))
    .addColumn('expiry_date', bigint)
    .addColumn('redirect_url', 'text')
    .addColumn('redirect_whole_page', 'boolean', notNullDefault(false))
    .addColumn('color', 'text', notNullDefault('2a2a2a'))
    .addColumn('play_button', 'boolean', notNullDefault(true))
    .addColumn('viral_sharing', 'boolean', notNullDefault(true))
    .addColumn('whitelisted_embed_domains', 'text', notNullDefault('[]'))
    .addColumn('embed_button', 'boolean', notNullDefault(true))
    .addColumn('embed_enabled', 'boolean', notNullDefault(true))
    .addColumn('description', 'text')
    .addColumn('viral_sharing_message', 'text')
    .addColumn('custom_sharing_link', 'text')
    .addColumn('playlist_color', 'text')
    .addColumn('on_complete', 'text')
    .addColumn('player_type', 'text', notNullDefault('playlist'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('players_org_idx').on('players').columns(['organization_id', 'id']).execute();

  await withId(db, db.schema.createTable('videos'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('uuid', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('upload_url', 'text')
    .addColumn('description', 'text')
    .addColumn('sync', 'boolean', notNullDefault(false))
    .addColumn('audio_gain', 'integer', notNullDefault(0))
    .addColumn('webhook_url', 'text')
    .addColumn('status', 'text')
    .addColumn('error_message', 'text')
    .addColumn('notes', 'text')
    .addColumn('seconds', 'integer')
    .addColumn('origin', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('videos_org_idx').on('videos').columns(['organization_id', 'id']).execute();

  await withId(db, db.schema.createTable('video_files'))
    .addColumn('video_id', 'integer', cascade('videos'))
    .addColumn('custom_identifier', 'text')
    .addColumn('quality', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('video_files_video_idx').on('video_files').columns(['video_id', 'custom_identifier']).execute();

  await withId(db, db.schema.createTable('chapters'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('player_id', 'integer', cascade('players'))
    .addColumn('video_id', 'integer', cascade('videos'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chapters_player_idx').on('chapters').columns(['player_id', 'position']).execute();
  await db.schema.createIndex('chapters_video_idx').on('chapters').column('video_id').execute();

  await withId(db, db.schema.createTable('events'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('chapter_id', 'integer', (c) => c.references('chapters.id').onDelete('cascade'))
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('description', 'text')
    .addColumn('second', 'integer', notNullDefault(0))
    .addColumn('duration', 'integer')
    .addColumn('auto_close', 'boolean', notNullDefault(true))
    .addColumn('width', 'integer')
    .addColumn('html', 'text', notNullDefault(''))
    .addColumn('closeable', 'boolean', notNullDefault(true))
    .addColumn('fullscreen', 'boolean', notNullDefault(false))
    .addColumn('background_color', 'text')
    .addColumn('annotation_css', 'text')
    .addColumn('blur', 'boolean', notNullDefault(false))
    .addColumn('is_new_contact', 'boolean', notNullDefault(false))
    .addColumn('state', 'text', notNullDefault('public'))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_chapter_idx').on('events').columns(['chapter_id', 'id']).execute();
  await db.schema.createIndex('events_org_idx').on('events').columns(['organization_id', 'id']).execute();

  await withId(db, db.schema.createTable('tags'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('tags_org_name_unique', ['organization_id', 'name'])
    .execute();

  await db.schema
    .createTable('player_tags')
    .addColumn('player_id', 'integer', cascade('players'))
    .addColumn('tag_id', 'integer', cascade('tags'))
    .addPrimaryKeyConstraint('player_tags_pk', ['player_id', 'tag_id'])
    .execute();
  await db.schema.createIndex('player_tags_tag_idx').on('player_tags').column('tag_id').execute();

  await db.schema
    .createTable('video_tags')
    .addColumn('video_id', 'integer', cascade('videos'))
    .addColumn('tag_id', 'integer', cascade('tags'))
    .addPrimaryKeyConstraint('video_tags_pk', ['video_id', 'tag_id'])
    .execute();
  await db.schema.createIndex('video_tags_tag_idx').on('video_tags').column('tag_id').execute();

  await withId(db, db.schema.createTable('prompts'))
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('content', 'text', (c) => c.notNull())
    .addColumn('cta_link', 'text', notNullDefault(''))
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('prompts_org_type_unique', ['organization_id', 'type'])
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('organization_id', 'integer', cascade('organizations'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('response_type', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['organization_id', 'key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'idempotency_keys',
    'prompts',
    'video_tags',
    'player_tags',
    'tags',
    'events',
    'chapters',
    'video_files',
    'videos',
    'players',
    'api_tokens',
    'organizations',
  ]) {
    await db.schema.dropTable(t).execute();
  }
}
