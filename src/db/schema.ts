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
  webhook_signing_key: string | null;
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
  /** The user who made it through the API: it acts at most with their role and goes with them. */
  created_by: number | null;
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
  /** Incremented when upload_url changes; only the processing job of the current version publishes. */
  media_version: Generated<number>;
  /** Source display dimensions, once probed. */
  width: number | null;
  height: number | null;
}

export interface VideoFilesTable {
  id: Generated<number>;
  video_id: number;
  custom_identifier: string | null;
  quality: string;
  path: string;
  created_at: number;
  width: number | null;
  height: number | null;
  bytes: number | null;
  content_type: string | null;
}

export interface ThumbnailsTable {
  id: Generated<number>;
  organization_id: number;
  video_id: number;
  uuid: string;
  /** 'generated' | 'custom' */
  kind: string;
  /** File-store key, when the image is stored here. */
  path: string | null;
  /** External URL, for a custom thumbnail that is not stored here. */
  url: string | null;
  millisecond: number | null;
  width: number | null;
  height: number | null;
  selected: Generated<Bool>;
  created_at: number;
  updated_at: number;
}

export interface VideoFileSetsTable {
  id: Generated<number>;
  organization_id: number;
  video_id: number;
  custom_identifier: string;
  sd_url: string | null;
  hd_url: string | null;
  /** 'processing' | 'ready' | 'error' */
  status: Generated<string>;
  error_message: string | null;
  version: Generated<number>;
  created_at: number;
  updated_at: number;
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
  /** The chapter's player (derived by the repository from chapter_id; null for a default event). */
  player_id: number | null;
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

/** Events per organization, chapter (0: the organization's defaults), type and state; kept by triggers (migration 0021). */
export interface EventCountsTable {
  organization_id: number;
  chapter_id: number;
  event_type: string;
  state: string;
  n: number;
  /** PostgreSQL: the writing connection's shard of the count (migration 0035; readers sum a key's rows); always 0 on SQLite. */
  shard: Generated<number>;
}

/** Events per run of 4,096 ids of each list (migration 0033): where a deep page starts. */
export interface EventPagesTable {
  organization_id: number;
  /** 'org' (scope_id 0), 'chapter' (0: the defaults) or 'player'. */
  scope: 'org' | 'chapter' | 'player';
  scope_id: number;
  /** `id >> PAGE_RUN_BITS`. */
  bucket: number;
  n: number;
  /** PostgreSQL: the writing connection's shard of the count (migration 0035; readers sum a key's rows); always 0 on SQLite. */
  shard: Generated<number>;
}

/** Rows per organization and run of 4,096 ids of the paged tables (migration 0034, src/db/row-pages.ts). */
export interface RowPagesTable {
  table_name: string;
  organization_id: number;
  bucket: number;
  n: number;
  /** PostgreSQL: the writing connection's shard of the count (migration 0035; readers sum a key's rows); always 0 on SQLite. */
  shard: Generated<number>;
}

/** Rows per organization of the tables counted by triggers (src/db/row-counts.ts). */
export interface RowCountsTable {
  table_name: string;
  organization_id: number;
  n: number;
  /** PostgreSQL: the writing connection's shard of the count (migration 0035; readers sum a key's rows); always 0 on SQLite. */
  shard: Generated<number>;
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
  /** A running key's claim holds until then (Unix seconds); a claim whose request died is taken over after it. */
  locked_until: number | null;
}

export interface UsersTable {
  id: Generated<number>;
  organization_id: number;
  email: string;
  first_name: Generated<string>;
  last_name: Generated<string>;
  role: string;
  status: Generated<string>;
  created_at: number;
  updated_at: number;
}

/** A user's password (docs/sign-in.md): `scrypt$N$r$p$salt$hash`, never the password. */
export interface UserPasswordsTable {
  user_id: number;
  hash: string;
  updated_at: number;
}

/** A single-use link mailed to a user: an invitation or a password reset, by the SHA-256 of its secret. */
export interface UserLinksTable {
  token_hash: string;
  user_id: number;
  purpose: string;
  created_at: number;
  expires_at: number;
}

/** A signed-in person's session, by the SHA-256 of its cookie. */
export interface UserSessionsTable {
  id_hash: string;
  user_id: number;
  role: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface TeamsTable {
  id: Generated<number>;
  organization_id: number;
  name: string;
  is_admin: Generated<Bool>;
  created_at: number;
  updated_at: number;
}

export interface TeamMembersTable {
  team_id: number;
  user_id: number;
}

export interface AllotmentLimitsTable {
  organization_id: number;
  type: string;
  limit: number;
  grace_limit: Generated<number>;
  enforced: Generated<Bool>;
}

export interface BlacklistedIpRangesTable {
  id: Generated<number>;
  organization_id: number;
  name: string;
  ip_range: string;
  range_start: string;
  range_end: string;
  created_at: number;
  updated_at: number;
}

export interface AccessManagersTable {
  id: Generated<number>;
  organization_id: number;
  player_id: number;
  enabled: Generated<Bool>;
  moderator_id: number | null;
  custom_sender_display_name: string | null;
  custom_approval_message: string | null;
  custom_denial_message: string | null;
  whitelisted_domains_enabled: Generated<Bool>;
  whitelisted_domains: Generated<string>;
  max_access_code_uses: number | null;
  access_code_uses: Generated<number>;
  created_at: number;
  updated_at: number;
}

export interface GdprRequestsTable {
  id: Generated<number>;
  organization_id: number;
  receipt_id: string;
  request_action: string;
  email: string;
  webhook: string | null;
  new_values: string | null;
  status: Generated<string>;
  result: string | null;
  created_at: number;
  updated_at: number;
}

export interface StakeholderEmailsTable {
  id: Generated<number>;
  organization_id: number;
  recipients: string;
  subject: string;
  body: string;
  player_id: number | null;
  created_at: number;
  /** sending | sent | failed (0006). */
  status: Generated<string>;
  sent_at: number | null;
  message_id: string | null;
  error: string | null;
}

export interface JobsTable {
  id: Generated<number>;
  type: string;
  payload: Generated<string>;
  status: Generated<string>;
  attempts: Generated<number>;
  max_attempts: Generated<number>;
  run_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** A person a job's payload names (docs/gdpr.md): GDPR requests find the job through (organization_id, email). */
export interface JobSubjectsTable {
  job_id: number;
  organization_id: number;
  /** Lower-cased. */
  email: string;
}

/** One row per recurring housekeeping task (docs/jobs.md, "Retention"): locked while scheduling, the last run's outcome. */
export interface HousekeepingTasksTable {
  task: string;
  last_started_at: number | null;
  last_finished_at: number | null;
  /** JSON: what the last run deleted, or its error. */
  last_result: string | null;
}

export interface CaptionsTable {
  id: Generated<number>;
  organization_id: number;
  video_id: number;
  language: string;
  status: string;
  is_default: Generated<Bool>;
  notes: string | null;
  source_format: string | null;
  source_url: string | null;
  /** WebVTT text of a caption written before caption files moved to the media store; else null. */
  content: string | null;
  /** Media store key of the caption's WebVTT file (videos/<uuid>/captions/…); null while there is none. */
  file_key: string | null;
  formatted_text: string | null;
  plain_text: string | null;
  cue_count: Generated<number>;
  error_message: string | null;
  error_line: number | null;
  revision: Generated<number>;
  created_at: number;
  updated_at: number;
}

/** Registered analytics and player webhooks (docs/webhooks.md). */
/** The job that delivers one message of a webhook (docs/webhooks.md, "Deliveries"). */
export interface WebhookDeliveriesTable {
  job_id: number;
  webhook_id: number;
  event: string;
  created_at: number;
}

export interface WebhooksTable {
  id: Generated<number>;
  organization_id: number;
  kind: string;
  url: string;
  security_key: string;
  /** JSON array of event names. */
  event_subscriptions: string;
  created_at: number;
  updated_at: number;
}

/** Live streams (docs/live.md): the ingest credentials, shared by a recurring stream's instances. */
export interface LiveStreamsTable {
  id: Generated<number>;
  organization_id: number;
  recurring: Generated<Bool>;
  stream_key: string;
  backup_key: string | null;
  has_redundant_streams: Generated<Bool>;
  deleted_at: number | null;
  created_at: number;
  updated_at: number;
}

/** One broadcast of a live stream, with its own player and video. */
export interface LiveStreamInstancesTable {
  id: Generated<number>;
  organization_id: number;
  stream_id: number;
  player_id: number | null;
  video_id: number | null;
  player_uuid: string;
  name: string;
  description: Generated<string>;
  tags: Generated<string>;
  search_text: Generated<string>;
  status: Generated<string>;
  segment_length: Generated<number>;
  dvr_enabled: Generated<Bool>;
  disable_notifications: Generated<Bool>;
  email: string | null;
  air_date: number | null;
  start_time: number | null;
  end_time: number | null;
  vod_created_at: number | null;
  ingest_session: string | null;
  ingest_heartbeat_at: number | null;
  primary_session: string | null;
  backup_session: string | null;
  health_primary: string | null;
  health_backup: string | null;
  health_at: number | null;
  created_at: number;
  updated_at: number;
}

/** Counters of the public limits, one row per key and window (docs/security.md). */
/** A direct upload's tus capability (docs/uploads.md). */
export interface UploadsTable {
  id: string;
  secret_hash: string;
  organization_id: number;
  video_id: number | null;
  /** pending, complete (bytes in the upload store), stored (the original in the media store), expired */
  status: string;
  size: number | null;
  expires_at: number;
  created_at: number;
  completed_at: number | null;
}

/** A tus upload being written, locked by one request across every API process (docs/uploads.md). */
export interface UploadLocksTable {
  id: string;
  owner: string;
  /** epoch milliseconds */
  expires_at: number;
  release_requested: Generated<number>;
}

export interface RateLimitsTable {
  key: string;
  count: number;
  /** Epoch milliseconds: the end of the counting window. */
  reset_at: number;
}

/** Hubs (docs/hubs.md): public collections of an organization's players; `slug` unique on the server. */
export interface HubsTable {
  id: Generated<number>;
  organization_id: number;
  name: string;
  slug: string;
  description: string | null;
  public: Generated<Bool>;
  created_at: number;
  updated_at: number;
}

/** A hub's categories, positions 0..n-1 within the hub; `slug` unique within the hub. */
export interface HubCategoriesTable {
  id: Generated<number>;
  organization_id: number;
  hub_id: number;
  name: string;
  slug: string;
  position: number;
  created_at: number;
  updated_at: number;
}

/** The players of a category, in `position` order. */
export interface HubCategoryPlayersTable {
  category_id: number;
  player_id: number;
  position: number;
}

/** A key written to the S3 media store (src/media/object-index.ts); a folder's objects are deleted from these. */
export interface StoredObjectsTable {
  key: string;
  /** epoch seconds */
  created_at: number;
}

/** A viewer's report, kept (docs/analytics.md). */
export interface AnalyticsEventsTable {
  id: Generated<number>;
  organization_id: number;
  player_id: number;
  video_id: number | null;
  /** The chapter's index in play order. */
  chapter: number;
  /** load, view, attention_span, cta_impression, cta_click, identified_view */
  type: string;
  /** view: the milestone reached (0 is the start of playback). */
  percent: number | null;
  /** cta_impression, cta_click: the event (CTA) id. */
  event_id: number | null;
  /** attention_span: seconds of the chapter actually played (merged stretches). */
  watched_seconds: number | null;
  /** attention_span: JSON [[from, to], …] in seconds of the chapter. */
  watched: string | null;
  /** attention_span: JSON, how often each twentieth was watched. */
  buckets: string | null;
  email: string | null;
  /** Pseudonymous, per player origin; null for Do-Not-Track / Sec-GPC viewers. */
  visitor_id: string | null;
  /** The player load the report came from. */
  session_id: string;
  /** The embedding page's origin (scheme, host, port). */
  origin: string | null;
  /** desktop, mobile, tablet, tv or other */
  device: string;
  browser: string;
  country: string | null;
  dedup_key: string;
  /** epoch milliseconds */
  created_at: number;
}

/** Per organization, player and UTC day: the rolled-up figures of its reports (docs/analytics.md, "Rollups"). */
export interface AnalyticsDaysTable {
  organization_id: number;
  player_id: number;
  /** epoch milliseconds of the UTC day's start */
  day: number;
  loads: Generated<number>;
  plays: Generated<number>;
  views: Generated<number>;
  completions: Generated<number>;
  watch_seconds: Generated<number>;
  cta_clicks: Generated<number>;
  /** Sketches (src/modules/analytics/distinct-sketch.ts) of the day's distinct viewers and addresses; kept from `analytics_rollup.player_days_since` (migration 0036). */
  viewers: Uint8Array | null;
  emails: Uint8Array | null;
}

/** A player's figures and sketches of a UTC hour, as analytics_days keeps them of a day (migration 0040). */
export interface AnalyticsPlayerHoursTable {
  organization_id: number;
  player_id: number;
  /** epoch milliseconds of the UTC hour's start */
  hour: number;
  loads: Generated<number>;
  plays: Generated<number>;
  views: Generated<number>;
  completions: Generated<number>;
  watch_seconds: Generated<number>;
  cta_clicks: Generated<number>;
  viewers: Uint8Array | null;
  emails: Uint8Array | null;
}

/** A video's views that started on a UTC day and their retention edges (src/modules/analytics/retention-curve.ts; migration 0041). */
export interface AnalyticsRetentionDaysTable {
  organization_id: number;
  video_id: number;
  day: number;
  views: Generated<number>;
  /** JSON: [second, net change in viewers] pairs, by second */
  edges: Generated<string>;
}

/** Per organization and UTC day: sketches (DistinctSketch) of its distinct viewers and of the addresses given. */
export interface AnalyticsOrgDaysTable {
  organization_id: number;
  day: number;
  viewers: Uint8Array | null;
  emails: Uint8Array | null;
}

/** How far the rollups have read the reports (one row). */
export interface AnalyticsRollupTable {
  id: number;
  last_event_id: number;
  /** The first day (epoch ms) whose players' days have sketches: the days before are read from their reports (migration 0036). */
  player_days_since: Generated<number>;
  /** The first day (epoch ms) whose players' breakdowns are rolled up: the days before are read from their reports (migration 0039). */
  breakdown_days_since: Generated<number>;
  /** The first day (epoch ms) whose players' hours are rolled up: the hours before are read from their reports (migration 0040). */
  player_hours_since: Generated<number>;
  /** The first day (epoch ms) whose videos' retention is rolled up: the days before are read from their reports (migration 0041). */
  retention_days_since: Generated<number>;
}

/** A player's views and distinct viewers of a UTC day with one country, device class or browser family (migration 0039). */
export interface AnalyticsBreakdownDaysTable {
  organization_id: number;
  player_id: number;
  /** country, device or browser */
  dimension: string;
  day: number;
  /** '' when unknown */
  value: string;
  views: Generated<number>;
  /** A sketch (src/modules/analytics/distinct-sketch.ts) of the distinct viewers. */
  viewers: Uint8Array | null;
}

/** A CTA's figures of a UTC day (epoch ms), added by the rollups (migration 0038). */
export interface AnalyticsCtaDaysTable {
  organization_id: number;
  event_id: number;
  day: number;
  impressions: Generated<number>;
  clicks: Generated<number>;
}

/** An address given at an email gate of the organization, and when it was last given (epoch ms). */
export interface AnalyticsIdentifiedTable {
  organization_id: number;
  email: string;
  last_seen: number;
}

/** An address given at an email gate of one player, and when it was last given there (epoch ms; migration 0037). */
export interface AnalyticsIdentifiedPlayersTable {
  organization_id: number;
  player_id: number;
  email: string;
  last_seen: number;
}

export interface DB {
  organizations: OrganizationsTable;
  api_tokens: ApiTokensTable;
  players: PlayersTable;
  videos: VideosTable;
  video_files: VideoFilesTable;
  thumbnails: ThumbnailsTable;
  video_file_sets: VideoFileSetsTable;
  chapters: ChaptersTable;
  events: EventsTable;
  event_counts: EventCountsTable;
  event_pages: EventPagesTable;
  row_counts: RowCountsTable;
  row_pages: RowPagesTable;
  tags: TagsTable;
  player_tags: PlayerTagsTable;
  video_tags: VideoTagsTable;
  prompts: PromptsTable;
  idempotency_keys: IdempotencyKeysTable;
  users: UsersTable;
  user_passwords: UserPasswordsTable;
  user_links: UserLinksTable;
  user_sessions: UserSessionsTable;
  teams: TeamsTable;
  team_members: TeamMembersTable;
  allotment_limits: AllotmentLimitsTable;
  blacklisted_ip_ranges: BlacklistedIpRangesTable;
  access_managers: AccessManagersTable;
  gdpr_requests: GdprRequestsTable;
  stakeholder_emails: StakeholderEmailsTable;
  jobs: JobsTable;
  job_subjects: JobSubjectsTable;
  housekeeping_tasks: HousekeepingTasksTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  live_streams: LiveStreamsTable;
  live_stream_instances: LiveStreamInstancesTable;
  captions: CaptionsTable;
  rate_limits: RateLimitsTable;
  uploads: UploadsTable;
  upload_locks: UploadLocksTable;
  hubs: HubsTable;
  hub_categories: HubCategoriesTable;
  hub_category_players: HubCategoryPlayersTable;
  stored_objects: StoredObjectsTable;
  analytics_events: AnalyticsEventsTable;
  analytics_days: AnalyticsDaysTable;
  analytics_player_hours: AnalyticsPlayerHoursTable;
  analytics_retention_days: AnalyticsRetentionDaysTable;
  analytics_org_days: AnalyticsOrgDaysTable;
  analytics_rollup: AnalyticsRollupTable;
  analytics_cta_days: AnalyticsCtaDaysTable;
  analytics_breakdown_days: AnalyticsBreakdownDaysTable;
  analytics_identified: AnalyticsIdentifiedTable;
  analytics_identified_players: AnalyticsIdentifiedPlayersTable;
}
