import type { Generated } from 'kysely';

/**
 * Table types for Kysely. Booleans are `boolean` on PostgreSQL and 0/1 on SQLite, hence `Bool`;
 * JSON-valued columns are stored as text. Times are integer Unix seconds.
 */
export type Bool = boolean | number;

export interface OrganizationsTable {
  id: Generated<number>;
  name: string;
  parent_id: number | null;
  account_id: number | null;
  embed_domain: string | null;
  secure_embed_domain: string | null;
  playback_domain: string | null;
  features: Generated<string>;
  created_at: number;
  updated_at: number;
}

export interface ApiTokensTable {
  id: Generated<number>;
  organization_id: number;
  user_id: number | null;
  role: string;
  token_hash: string;
  name: string | null;
  created_at: number;
}

export interface PlayersTable {
  id: Generated<number>;
  organization_id: number;
  uuid: string;
  name: string;
  status: string | null;
  access_code: string | null;
  autoplay: Generated<Bool>;
  sharing_page_comments: Generated<Bool>;
  sharing_page: Generated<Bool>;
  default_hd: Generated<Bool>;
  splash_screen_fade: Generated<Bool>;
  mute_onload: Generated<Bool>;
  height: Generated<number>;
  width: Generated<number>;
  playlist_always_open: Generated<Bool>;
  release_date: Generated<number>;
  expiry_date: number | null;
  redirect_url: string | null;
  redirect_whole_page: Generated<Bool>;
  color: Generated<string>;
  play_button: Generated<Bool>;
  viral_sharing: Generated<Bool>;
  whitelisted_embed_domains: Generated<string>;
  embed_button: Generated<Bool>;
  embed_enabled: Generated<Bool>;
  description: string | null;
  viral_sharing_message: string | null;
  custom_sharing_link: string | null;
  playlist_color: string | null;
  on_complete: string | null;
  player_type: Generated<string>;
  created_at: number;
  updated_at: number;
}

export interface VideosTable {
  id: Generated<number>;
  organization_id: number;
  uuid: string;
  name: string;
  upload_url: string | null;
  description: string | null;
  sync: Generated<Bool>;
  audio_gain: Generated<number>;
  webhook_url: string | null;
  status: string | null;
  error_message: string | null;
  notes: string | null;
  seconds: number | null;
  origin: string | null;
  created_at: number;
  updated_at: number;
}

export interface VideoFilesTable {
  id: Generated<number>;
  video_id: number;
  custom_identifier: string | null;
  quality: string;
  path: string;
  created_at: number;
}

export interface ChaptersTable {
  id: Generated<number>;
  organization_id: number;
  player_id: number;
  video_id: number;
  position: number;
  created_at: number;
  updated_at: number;
}

export interface EventsTable {
  id: Generated<number>;
  organization_id: number;
  /** null for an organization default event. */
  chapter_id: number | null;
  event_type: string;
  name: string | null;
  description: string | null;
  second: Generated<number>;
  duration: number | null;
  auto_close: Generated<Bool>;
  width: number | null;
  html: Generated<string>;
  closeable: Generated<Bool>;
  fullscreen: Generated<Bool>;
  background_color: string | null;
  annotation_css: string | null;
  blur: Generated<Bool>;
  is_new_contact: Generated<Bool>;
  state: Generated<string>;
  created_at: number;
  updated_at: number;
}

export interface TagsTable {
  id: Generated<number>;
  organization_id: number;
  name: string;
  created_at: number;
  updated_at: number;
}

export interface PlayerTagsTable {
  player_id: number;
  tag_id: number;
}

export interface VideoTagsTable {
  video_id: number;
  tag_id: number;
}

export interface PromptsTable {
  id: Generated<number>;
  organization_id: number;
  type: string;
  content: string;
  cta_link: Generated<string>;
  created_at: number;
  updated_at: number;
}

export interface IdempotencyKeysTable {
  organization_id: number;
  key: string;
  request_hash: string;
  state: string;
  response_status: number | null;
  response_body: string | null;
  response_type: string | null;
  created_at: number;
}

export interface DB {
  organizations: OrganizationsTable;
  api_tokens: ApiTokensTable;
  players: PlayersTable;
  videos: VideosTable;
  video_files: VideoFilesTable;
  chapters: ChaptersTable;
  events: EventsTable;
  tags: TagsTable;
  player_tags: PlayerTagsTable;
  video_tags: VideoTagsTable;
  prompts: PromptsTable;
  idempotency_keys: IdempotencyKeysTable;
}
