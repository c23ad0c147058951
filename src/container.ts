import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import { JobsRepository } from './jobs/jobs.repository.ts';
import { createMailer } from './mail/create-mailer.ts';
import type { Mailer } from './mail/mailer.ts';
import { createFileStore, createMedia, type Media } from './media/media.ts';
import { ObjectIndexRepository } from './media/object-index.ts';
import { AccessManagersRepository } from './modules/access-managers/access-managers.repository.ts';
import { AnalyticsRepository } from './modules/analytics/analytics.repository.ts';
import { Countries } from './modules/analytics/countries.ts';
import { AnalyticsService } from './modules/analytics/analytics.service.ts';
import { RollupRepository } from './modules/analytics/rollup.repository.ts';
import { RollupService } from './modules/analytics/rollup.service.ts';
import { RollupThread } from './modules/analytics/rollup-thread.ts';
import { AccessManagersService } from './modules/access-managers/access-managers.service.ts';
import { AllotmentsRepository, EmbedsRepository } from './modules/allotments/allotments.repository.ts';
import { AllotmentsService } from './modules/allotments/allotments.service.ts';
import { CaptionsRepository } from './modules/captions/captions.repository.ts';
import { CaptionsService } from './modules/captions/captions.service.ts';
import { ChapterWriters } from './modules/chapters/chapter-writer.ts';
import { ChaptersRepository } from './modules/chapters/chapters.repository.ts';
import { CtasService } from './modules/ctas/ctas.service.ts';
import { EventsRepository } from './modules/events/events.repository.ts';
import { EventsService } from './modules/events/events.service.ts';
import { GdprRepository } from './modules/gdpr/gdpr.repository.ts';
import { GdprService } from './modules/gdpr/gdpr.service.ts';
import { HubsRepository } from './modules/hubs/hubs.repository.ts';
import { HubPagesService } from './modules/hubs/hub-pages.service.ts';
import { HubsService } from './modules/hubs/hubs.service.ts';
import { HousekeepingRepository } from './modules/housekeeping/housekeeping.repository.ts';
import { HousekeepingService } from './modules/housekeeping/housekeeping.service.ts';
import { IdempotencyRepository } from './modules/idempotency/idempotency.repository.ts';
import { IdempotencyService } from './modules/idempotency/idempotency.service.ts';
import { IpRangesRepository } from './modules/ip-ranges/ip-ranges.repository.ts';
import { IpRangesService } from './modules/ip-ranges/ip-ranges.service.ts';
import { LiveRepository } from './modules/live/live.repository.ts';
import { LivePlaybackService } from './modules/live/live-playback.service.ts';
import { LiveStateService, liveTiming } from './modules/live/live-state.service.ts';
import { LiveService } from './modules/live/live.service.ts';
import { MediaFilesService } from './modules/media-files/media-files.service.ts';
import { OrganizationsRepository } from './modules/organizations/organizations.repository.ts';
import { OrganizationsService } from './modules/organizations/organizations.service.ts';
import { PlayersRepository } from './modules/players/players.repository.ts';
import { PlayerChaptersService } from './modules/players/player-chapters.service.ts';
import { PlayerVideosService } from './modules/players/player-videos.service.ts';
import { PlayersService } from './modules/players/players.service.ts';
import { PromptsRepository } from './modules/prompts/prompts.repository.ts';
import { databaseRateLimitStore } from './modules/rate-limits/rate-limit-store.ts';
import { RateLimitsRepository } from './modules/rate-limits/rate-limits.repository.ts';
import { PromptsService } from './modules/prompts/prompts.service.ts';
import { RolesService } from './modules/roles/roles.service.ts';
import { SessionsRepository } from './modules/sessions/sessions.repository.ts';
import { SessionsService } from './modules/sessions/sessions.service.ts';
import { StakeholderEmailsRepository } from './modules/stakeholder-emails/stakeholder-emails.repository.ts';
import { StakeholderEmailsService } from './modules/stakeholder-emails/stakeholder-emails.service.ts';
import { TagsRepository } from './modules/tags/tags.repository.ts';
import { TagsService } from './modules/tags/tags.service.ts';
import { TeamsRepository } from './modules/teams/teams.repository.ts';
import { TeamsService } from './modules/teams/teams.service.ts';
import { ThumbnailsRepository } from './modules/thumbnails/thumbnails.repository.ts';
import { ThumbnailsService } from './modules/thumbnails/thumbnails.service.ts';
import { TokensRepository } from './modules/tokens/tokens.repository.ts';
import { TokensService } from './modules/tokens/tokens.service.ts';
import { createUploadBytes } from './modules/uploads/upload-bytes.ts';
import { DatabaseLocker } from './modules/uploads/upload-locker.ts';
import { UploadsRepository } from './modules/uploads/uploads.repository.ts';
import { UploadsService } from './modules/uploads/uploads.service.ts';
import { UsersRepository } from './modules/users/users.repository.ts';
import { UsersService } from './modules/users/users.service.ts';
import { VideoMediaRepository } from './modules/videos/video-media.repository.ts';
import { VideoMediaService } from './modules/videos/video-media.service.ts';
import { VideosRepository } from './modules/videos/videos.repository.ts';
import { VideosService } from './modules/videos/videos.service.ts';
import { AccessCodes } from './modules/watch/access-codes.ts';
import { Audience } from './modules/watch/audience.ts';
import { EmbedCode } from './modules/watch/embed-code.ts';
import { PlaybackGrants } from './modules/watch/playback-grants.ts';
import { PlaybackService } from './modules/watch/playback.service.ts';
import { ViewerReportsService } from './modules/watch/viewer-reports.service.ts';
import { WatchRepository } from './modules/watch/watch.repository.ts';
import { WatchPageService } from './modules/watch/watch-page.service.ts';
import { WatchService } from './modules/watch/watch.service.ts';
import { WebhooksRepository } from './modules/webhooks/webhooks.repository.ts';
import { WebhooksService } from './modules/webhooks/webhooks.service.ts';

export interface ContainerOptions {
  config: Config;
  database: Database;
  /** Where mail goes; by default SMTP when SMTP_URL is set, else the outbox under DATA_DIR. */
  mailer?: Mailer;
}

/**
 * The composition root: every repository and service of the process, built once, each given what it
 * depends on. Routes, job handlers, the CLI and the RTMP ingest take what they need from here.
 */
export function createContainer({ config, database, mailer = createMailer(config) }: ContainerOptions) {
  const db = database.db;
  const media: Media = createMedia(config, createFileStore(config, new ObjectIndexRepository(db)));

  const repositories = {
    accessManagers: new AccessManagersRepository(db),
    analytics: new AnalyticsRepository(db, database.longReads),
    analyticsRollups: new RollupRepository(db),
    allotments: new AllotmentsRepository(db),
    captions: new CaptionsRepository(db),
    chapters: new ChaptersRepository(db),
    embeds: new EmbedsRepository(db),
    events: new EventsRepository(db),
    gdpr: new GdprRepository(db),
    housekeeping: new HousekeepingRepository(db),
    hubs: new HubsRepository(db),
    idempotency: new IdempotencyRepository(db),
    ipRanges: new IpRangesRepository(db),
    jobs: new JobsRepository(db),
    live: new LiveRepository(db),
    organizations: new OrganizationsRepository(db),
    players: new PlayersRepository(db),
    prompts: new PromptsRepository(db),
    rateLimits: new RateLimitsRepository(db),
    sessions: new SessionsRepository(db),
    stakeholderEmails: new StakeholderEmailsRepository(db),
    tags: new TagsRepository(db),
    teams: new TeamsRepository(db),
    thumbnails: new ThumbnailsRepository(db),
    tokens: new TokensRepository(db),
    uploads: new UploadsRepository(db),
    users: new UsersRepository(db),
    videoMedia: new VideoMediaRepository(db),
    videos: new VideosRepository(db),
    watch: new WatchRepository(db),
    webhooks: new WebhooksRepository(db),
  };
  const r = repositories;

  const tokens = new TokensService(r.tokens);
  const allotments = new AllotmentsService(db, r.allotments, r.embeds);
  const webhooks = new WebhooksService(db, r.webhooks);
  const videos = new VideosService(db, media.store, r.videos);
  const chapterWriters = new ChapterWriters(r.chapters, r.videos, videos);
  const players = new PlayersService(db, r.players, r.chapters, r.videos, chapterWriters, allotments, webhooks);
  const events = new EventsService(config.listDefaultCap, r.events);
  const ipRanges = new IpRangesService(r.ipRanges);
  const videoMedia = new VideoMediaService(db, media, r.videoMedia, r.videos);
  const captions = new CaptionsService(db, media.signer, r.captions, r.videos, ipRanges, media.store);
  const thumbnails = new ThumbnailsService(db, media, r.thumbnails, r.videos, r.players, r.chapters);
  const hubs = new HubsService(db, r.hubs, config.publicUrl);
  const embed = new EmbedCode(config.publicUrl);
  const audience = new Audience(ipRanges);
  const grants = new PlaybackGrants(config.signingSecret!);
  const livePlayback = new LivePlaybackService(media.store, r.live);
  const watchPages = new WatchPageService(config, embed, players, events, videoMedia, captions, thumbnails, r.live, grants);
  const playerVideos = new PlayerVideosService(db, videos, r.players, r.chapters, players);
  const uploadBytes = createUploadBytes(config);
  // One writer per upload across every API process, and the expiry takes the upload from its writer.
  const uploadLocker = new DatabaseLocker(r.uploads);
  const liveRepos = { live: r.live, videos: r.videos, players: r.players, chapters: r.chapters };

  const sessions = new SessionsService(db, r.sessions, mailer, { publicUrl: config.publicUrl, ...config.sessions });
  const ctas = new CtasService(events);
  // The summary reads the rollups where the reports are read (Database.longReads).
  const analytics = new AnalyticsService(r.analytics, new RollupRepository(database.longReads), players, videos, ctas, new Countries(config.geoipDatabase));
  const services = {
    analytics,
    analyticsRollups: new RollupService(
      db,
      config.analyticsRollup,
      r.analyticsRollups,
      // SQLite answers on the event loop: in a file, the batches go to a thread with its own connection.
      database.file ? new RollupThread({ file: database.file, ...config.analyticsRollup }) : undefined,
    ),
    accessManagers: new AccessManagersService(db, r.accessManagers),
    allotments,
    captions,
    chapters: new PlayerChaptersService(db, r.chapters, r.videos, r.players, players, chapterWriters),
    ctas,
    events,
    gdpr: new GdprService(db, r.gdpr),
    housekeeping: new HousekeepingService(db, config.housekeeping, r.housekeeping, database.statistics),
    idempotency: new IdempotencyService(r.idempotency),
    ipRanges,
    live: new LiveService(db, config, r.live, liveRepos, players),
    livePlayback,
    liveState: new LiveStateService(db, liveTiming(config.live), r.live, liveRepos, players),
    mediaFiles: new MediaFilesService(media, r.videos, ipRanges, captions),
    organizations: new OrganizationsService(db, r.organizations, r.teams, tokens, allotments, {
      embedDomain: config.embedDomain,
      playbackDomain: config.playbackDomain,
    }),
    players,
    hubs,
    hubPages: new HubPagesService(config, hubs, players, r.players, thumbnails, ipRanges, embed),
    playerVideos,
    prompts: new PromptsService(r.prompts),
    roles: new RolesService(),
    sessions,
    stakeholderEmails: new StakeholderEmailsService(
      db,
      mailer,
      { limit: config.stakeholderEmailsPerHour, publicUrl: config.publicUrl },
      r.stakeholderEmails,
      r.jobs,
    ),
    tags: new TagsService(db, r.tags),
    teams: new TeamsService(db, r.teams, allotments),
    thumbnails,
    tokens,
    uploadBytes,
    uploadLocker,
    uploads: new UploadsService(db, r.uploads, playerVideos, videos, uploadBytes, media, uploadLocker, {
      publicUrl: config.publicUrl,
      expiryHours: config.uploads.expiryHours,
    }),
    users: new UsersService(db, r.users, r.tokens, allotments, sessions),
    videoMedia,
    videos,
    watch: new WatchService(config, r.watch, watchPages, audience, new AccessCodes(config.signingSecret!), embed, grants),
    playback: new PlaybackService(r.watch, grants, audience, players, captions, livePlayback, media, thumbnails, watchPages),
    viewerReports: new ViewerReportsService(db, r.watch, audience, webhooks, embed, analytics),
    webhooks,
  };

  // Where the public limits count: Redis when configured, else the database (docs/security.md).
  const rateLimits = config.redisUrl ? { redisUrl: config.redisUrl } : { store: databaseRateLimitStore(r.rateLimits) };

  return { config, database, media, mailer, repositories, services, rateLimits };
}

export type Container = ReturnType<typeof createContainer>;
export type Services = Container['services'];
