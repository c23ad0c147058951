import { createRequire } from 'node:module';
import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { rememberToolVersionsIn, resolveTool, type ToolName } from './lib/ffmpeg-binaries.ts';
import { parseStorageUrl, type S3Location } from './lib/storage-url.ts';

/** Every setting the service reads from its environment, with its default. Parsed once at start-up. */
const EnvSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1' }),
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000 }),
  DATA_DIR: Type.String({ default: './data' }),
  DATABASE_URL: Type.Optional(Type.String()),
  /** Public base URL of this server (used for playback and embed domains when those are not set). */
  PUBLIC_URL: Type.Optional(Type.String()),
  PLAYBACK_DOMAIN: Type.Optional(Type.String()),
  EMBED_DOMAIN: Type.Optional(Type.String()),
  /** What this process runs: the HTTP API, the job worker, or both. */
  ROLE: Type.Union([Type.Literal('api'), Type.Literal('worker'), Type.Literal('all')], { default: 'all' }),
  /** HTTP processes on this machine sharing PORT (node:cluster); the first also runs what ROLE says beside the API. */
  API_PROCESSES: Type.Integer({ minimum: 1, maximum: 64, default: 1 }),
  /** Jobs one worker process runs at once. */
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  /** A running job's lease: a worker that dies (killed, its machine lost) gives its jobs up to another after this many seconds. */
  JOB_LEASE_SECONDS: Type.Integer({ minimum: 3, maximum: 3600, default: 60 }),
  LOG_LEVEL: Type.Union(
    [
      Type.Literal('fatal'),
      Type.Literal('error'),
      Type.Literal('warn'),
      Type.Literal('info'),
      Type.Literal('debug'),
      Type.Literal('trace'),
      Type.Literal('silent'),
    ],
    { default: 'info' },
  ),
  /** Largest accepted request body, in bytes. */
  BODY_LIMIT: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  /** Longest a client may take to send a whole request (headers and body). */
  REQUEST_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  /** Secret for signed media URLs; shared by every process of one installation. Default: DATA_DIR/signing-secret. */
  SIGNING_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  /** Lists without per_page return at most this many items. */
  LIST_DEFAULT_CAP: Type.Integer({ minimum: 1, default: 1000 }),
  /** Media (docs/media.md): hosts fetched even on private addresses ("host" or "host:port", comma-separated). */
  UPLOAD_ALLOWED_HOSTS: Type.String({ default: '' }),
  /** Largest source (upload_url, custom renditions) fetched, in bytes. */
  MAX_UPLOAD_BYTES: Type.Integer({ minimum: 1, default: 2_147_483_648 }),
  /** Longest a source download may take, in seconds. */
  UPLOAD_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 1800 }),
  /** A source or custom rendition download that receives no byte for this many seconds fails (and is retried). */
  UPLOAD_IDLE_TIMEOUT_SECONDS: Type.Integer({ minimum: 1, default: 30 }),
  /** Direct uploads (docs/uploads.md): hours an unfinished upload is kept before it expires and its bytes are removed. */
  UPLOAD_EXPIRY_HOURS: Type.Integer({ minimum: 1, maximum: 720, default: 24 }),
  FFMPEG_PATH: Type.Optional(Type.String()),
  FFPROBE_PATH: Type.Optional(Type.String()),
  /** Object storage (docs/media.md, "Object storage"): s3://BUCKET/PREFIX keeps every piece of media in S3; unset, on the local disk. */
  STORAGE_URL: Type.Optional(Type.String({ pattern: '^s3://' })),
  /** The S3 API endpoint (an S3-compatible server); unset, AWS's for S3_REGION. */
  S3_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  S3_REGION: Type.String({ default: 'us-east-1' }),
  /** Path-style addressing (http://endpoint/bucket/key), which most S3-compatible servers need. */
  S3_FORCE_PATH_STYLE: Type.Boolean({ default: false }),
  /** S3 credentials; unset, the AWS SDK's usual chain (shared files, instance or task roles). */
  AWS_ACCESS_KEY_ID: Type.Optional(Type.String()),
  AWS_SECRET_ACCESS_KEY: Type.Optional(Type.String()),
  AWS_SESSION_TOKEN: Type.Optional(Type.String()),
  /** Memory (MB) each process keeps of recently read 1 MiB slices of media files in S3 (docs/media.md); 0 turns it off. */
  S3_READ_CACHE_MB: Type.Integer({ minimum: 0, maximum: 65536, default: 64 }),
  /** How stored files are delivered: streamed through Reelbase, or (with STORAGE_URL) a redirect to a presigned URL. */
  MEDIA_DELIVERY: Type.Union([Type.Literal('stream'), Type.Literal('redirect')], { default: 'stream' }),
  /** Where media files live; default DATA_DIR/media. */
  MEDIA_DIR: Type.Optional(Type.String()),
  /** Lifetime of signed media URLs, in seconds. */
  MEDIA_URL_TTL_SECONDS: Type.Integer({ minimum: 60, default: 21_600 }),
  /** smtp(s)://[user:pass@]host[:port]: outgoing mail goes through it; unset, into DATA_DIR/outbox. */
  SMTP_URL: Type.Optional(Type.String({ pattern: '^[sS][mM][tT][pP][sS]?://' })),
  /** Sender of outgoing mail, `address` or `Name <address>`. Default: Reelbase <no-reply@host of PUBLIC_URL>. */
  MAIL_FROM: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
  /** Stakeholder emails one organization may send per sliding hour (0 disables them). */
  STAKEHOLDER_EMAILS_PER_HOUR: Type.Integer({ minimum: 0, maximum: 100_000, default: 10 }),
  /** A GeoIP country database (MaxMind `.mmdb`: GeoLite2-Country, GeoIP2, ip-location-db): viewers' reports keep their country. */
  GEOIP_DATABASE: Type.Optional(Type.String({ minLength: 1 })),
  /** Viewers' reports per address and player in 10 minutes; wrong access codes per address and player in 10 minutes. */
  REPORTS_PER_10_MINUTES: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 600 }),
  ACCESS_CODE_ATTEMPTS_PER_10_MINUTES: Type.Integer({ minimum: 1, maximum: 10_000, default: 10 }),
  /** Signing in (docs/sign-in.md): days a session lasts, days an invitation link works, sign-in attempts per account in 10 minutes (three times as many per address). */
  SESSION_DAYS: Type.Integer({ minimum: 1, maximum: 365, default: 14 }),
  INVITATION_DAYS: Type.Integer({ minimum: 1, maximum: 90, default: 7 }),
  SIGN_IN_ATTEMPTS_PER_10_MINUTES: Type.Integer({ minimum: 1, maximum: 10_000, default: 10 }),
  /** Where the public limits are counted: Redis when set, else the database (shared by every process either way). */
  REDIS_URL: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  /** Housekeeping (docs/jobs.md, "Retention"): seconds between two sweeps. */
  HOUSEKEEPING_INTERVAL_SECONDS: Type.Integer({ minimum: 60, maximum: 86_400, default: 3600 }),
  /** Days a job that succeeded is kept after it finished. */
  JOB_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 7 }),
  /** Days a job that failed for good is kept after it failed (longer: someone may want to look at it). */
  FAILED_JOB_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  /** Analytics (docs/analytics.md): seconds between two rollups of the stored reports (the organization's figures are at most this late). */
  ANALYTICS_ROLLUP_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  /** Days the raw reports are kept; the daily rollups stay. */
  ANALYTICS_RETENTION_DAYS: Type.Integer({ minimum: 1, maximum: 36_500, default: 730 }),
  /** Live streams (docs/live.md): RTMP ingest port (0 = no ingest in this process) and bind address (default HOST). */
  RTMP_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 1935 }),
  RTMP_HOST: Type.Optional(Type.String()),
  /** Host named in live streams' ingest_url (default: the host name of PUBLIC_URL). */
  INGEST_HOST: Type.Optional(Type.String()),
  /** A publisher that reconnects within this many seconds continues the same broadcast. */
  LIVE_RECONNECT_WINDOW_SECONDS: Type.Number({ minimum: 0, maximum: 3600, default: 30 }),
  /** How often the health of an incoming live stream is sampled, in seconds. */
  LIVE_HEALTH_INTERVAL_SECONDS: Type.Number({ minimum: 0.2, maximum: 60, default: 5 }),
});

export type Env = Static<typeof EnvSchema>;

export interface Config {
  role: 'api' | 'worker' | 'all';
  /** HTTP processes sharing the port (src/api-processes.ts); 1: this process alone. */
  apiProcesses: number;
  workerConcurrency: number;
  jobLeaseMs: number;
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
  publicUrl: string;
  playbackDomain: string;
  embedDomain: string;
  logLevel: Env['LOG_LEVEL'];
  bodyLimit: number;
  requestTimeoutMs: number;
  listDefaultCap: number;
  /** Resolved at start-up (runtime.ts) when not configured. */
  signingSecret?: string;
  /** Media (docs/media.md). */
  uploadAllowedHosts: string[];
  maxUploadBytes: number;
  uploadTimeoutMs: number;
  uploadIdleTimeoutMs: number;
  /** Direct uploads (docs/uploads.md): where unfinished tus uploads live locally, and how long they are kept. */
  uploads: { dir: string; expiryHours: number };
  ffmpegPath: string;
  ffprobePath: string;
  mediaDir: string;
  mediaUrlTtlSeconds: number;
  /** Where media is stored (docs/media.md): the local MEDIA_DIR, or an S3 bucket. */
  storage: StorageConfig;
  smtpUrl?: string;
  mailFrom: string;
  stakeholderEmailsPerHour: number;
  limits: { reportsPer10Minutes: number; accessCodeAttemptsPer10Minutes: number; signInAttemptsPer10Minutes: number };
  sessions: { sessionDays: number; invitationDays: number };
  /** GEOIP_DATABASE. */
  geoipDatabase?: string;
  redisUrl?: string;
  /** Housekeeping (docs/jobs.md, "Retention"). */
  housekeeping: { intervalSeconds: number; doneJobRetentionDays: number; failedJobRetentionDays: number; analyticsRetentionDays: number };
  analyticsRollup: { intervalSeconds: number };
  /** Live streams (docs/live.md). */
  live: { rtmpPort: number; rtmpHost: string; ingestHost: string; reconnectWindowSeconds: number; healthIntervalSeconds: number };
}

export type StorageConfig =
  | { kind: 'local' }
  | {
      kind: 's3';
      location: S3Location;
      endpoint?: string;
      region: string;
      forcePathStyle: boolean;
      delivery: 'stream' | 'redirect';
      /** Bytes of slices of media files kept in memory (S3_READ_CACHE_MB). */
      readCacheBytes: number;
      credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
    };

export class ConfigError extends Error {}

const requireFromHere = createRequire(import.meta.url);
/**
 * ffmpeg/ffprobe: FFMPEG_PATH/FFPROBE_PATH, else a maintained one (5 or newer) on PATH, else the static
 * builds of the npm packages, the zero-setup fallback (src/lib/ffmpeg-binaries.ts).
 */
const installedBinary = (name: ToolName) => () => {
  try {
    return (requireFromHere(`@${name}-installer/${name}`) as { path: string }).path;
  } catch {
    // The package is missing or has no build for this platform: nothing is left to fall back on.
    const variable = name === 'ffmpeg' ? 'FFMPEG_PATH' : 'FFPROBE_PATH';
    throw new ConfigError(
      `No ${name} found: install ffmpeg 5 or newer on the PATH (Debian: apt-get install ffmpeg) or set ${variable} to the ${name} executable.`,
    );
  }
};

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const converted = Value.Default(EnvSchema, Value.Convert(EnvSchema, raw));
  if (!Value.Check(EnvSchema, converted)) {
    const problems = [...Value.Errors(EnvSchema, converted)].map((e) => `${e.instancePath || '/'} ${e.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  const e = converted;
  let storage: StorageConfig = { kind: 'local' };
  if (e.STORAGE_URL) {
    const location = parseStorageUrl(e.STORAGE_URL);
    if (!location) throw new ConfigError(`Invalid configuration: STORAGE_URL must be s3://BUCKET or s3://BUCKET/PREFIX (got ${e.STORAGE_URL})`);
    const credentials =
      e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
        ? { accessKeyId: e.AWS_ACCESS_KEY_ID, secretAccessKey: e.AWS_SECRET_ACCESS_KEY, ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}) }
        : undefined;
    storage = {
      kind: 's3',
      location,
      endpoint: e.S3_ENDPOINT,
      region: e.S3_REGION,
      forcePathStyle: e.S3_FORCE_PATH_STYLE,
      delivery: e.MEDIA_DELIVERY,
      readCacheBytes: e.S3_READ_CACHE_MB * 1024 * 1024,
      credentials,
    };
  } else if (e.MEDIA_DELIVERY === 'redirect') {
    throw new ConfigError('Invalid configuration: MEDIA_DELIVERY=redirect needs STORAGE_URL (object storage to redirect to)');
  }
  const hostForUrl = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  const publicUrl = (e.PUBLIC_URL ?? `http://${hostForUrl}:${e.PORT}`).replace(/\/+$/, '');
  const publicHost = new URL(publicUrl).host;
  rememberToolVersionsIn(path.join(path.resolve(e.DATA_DIR), '.tool-versions.json'));
  return {
    role: e.ROLE,
    apiProcesses: e.API_PROCESSES,
    workerConcurrency: e.WORKER_CONCURRENCY,
    jobLeaseMs: e.JOB_LEASE_SECONDS * 1000,
    host: e.HOST,
    port: e.PORT,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    publicUrl,
    playbackDomain: e.PLAYBACK_DOMAIN ?? publicHost,
    embedDomain: e.EMBED_DOMAIN ?? publicHost,
    logLevel: e.LOG_LEVEL,
    bodyLimit: e.BODY_LIMIT,
    requestTimeoutMs: e.REQUEST_TIMEOUT_SECONDS * 1000,
    listDefaultCap: e.LIST_DEFAULT_CAP,
    signingSecret: e.SIGNING_SECRET,
    uploadAllowedHosts: e.UPLOAD_ALLOWED_HOSTS.split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    maxUploadBytes: e.MAX_UPLOAD_BYTES,
    uploadTimeoutMs: e.UPLOAD_TIMEOUT_SECONDS * 1000,
    uploadIdleTimeoutMs: e.UPLOAD_IDLE_TIMEOUT_SECONDS * 1000,
    // Beside the media (same file system: a finished upload's original is moved, not copied).
    uploads: { dir: path.resolve(e.MEDIA_DIR ?? path.join(e.DATA_DIR, 'media'), '.uploads'), expiryHours: e.UPLOAD_EXPIRY_HOURS },
    ffmpegPath: resolveTool('ffmpeg', e.FFMPEG_PATH, env.PATH ?? process.env.PATH, installedBinary('ffmpeg')).path,
    ffprobePath: resolveTool('ffprobe', e.FFPROBE_PATH, env.PATH ?? process.env.PATH, installedBinary('ffprobe')).path,
    mediaDir: path.resolve(e.MEDIA_DIR ?? path.join(e.DATA_DIR, 'media')),
    mediaUrlTtlSeconds: e.MEDIA_URL_TTL_SECONDS,
    storage,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM ?? `Reelbase <no-reply@${new URL(publicUrl).hostname}>`,
    stakeholderEmailsPerHour: e.STAKEHOLDER_EMAILS_PER_HOUR,
    geoipDatabase: e.GEOIP_DATABASE,
    limits: {
      reportsPer10Minutes: e.REPORTS_PER_10_MINUTES,
      accessCodeAttemptsPer10Minutes: e.ACCESS_CODE_ATTEMPTS_PER_10_MINUTES,
      signInAttemptsPer10Minutes: e.SIGN_IN_ATTEMPTS_PER_10_MINUTES,
    },
    sessions: { sessionDays: e.SESSION_DAYS, invitationDays: e.INVITATION_DAYS },
    redisUrl: e.REDIS_URL,
    housekeeping: {
      intervalSeconds: e.HOUSEKEEPING_INTERVAL_SECONDS,
      doneJobRetentionDays: e.JOB_RETENTION_DAYS,
      failedJobRetentionDays: e.FAILED_JOB_RETENTION_DAYS,
      analyticsRetentionDays: e.ANALYTICS_RETENTION_DAYS,
    },
    analyticsRollup: { intervalSeconds: e.ANALYTICS_ROLLUP_SECONDS },
    live: {
      rtmpPort: e.RTMP_PORT,
      rtmpHost: e.RTMP_HOST ?? e.HOST,
      ingestHost: e.INGEST_HOST ?? new URL(publicUrl).hostname,
      reconnectWindowSeconds: e.LIVE_RECONNECT_WINDOW_SECONDS,
      healthIntervalSeconds: e.LIVE_HEALTH_INTERVAL_SECONDS,
    },
  };
}
