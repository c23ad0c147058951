import path from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';

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
  /** Jobs one worker process runs at once. */
  WORKER_CONCURRENCY: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  LOG_LEVEL: Type.Union(
    [Type.Literal('fatal'), Type.Literal('error'), Type.Literal('warn'), Type.Literal('info'), Type.Literal('debug'), Type.Literal('trace'), Type.Literal('silent')],
    { default: 'info' },
  ),
  /** Largest accepted request body, in bytes. */
  BODY_LIMIT: Type.Integer({ minimum: 1024, default: 1_048_576 }),
  /** Secret for signed media URLs; shared by every process of one installation. Default: DATA_DIR/signing-secret. */
  SIGNING_SECRET: Type.Optional(Type.String({ minLength: 16 })),
  /** Lists without per_page return at most this many items. */
  LIST_DEFAULT_CAP: Type.Integer({ minimum: 1, default: 1000 }),
});

export type Env = Static<typeof EnvSchema>;

export interface Config {
  role: 'api' | 'worker' | 'all';
  workerConcurrency: number;
  host: string;
  port: number;
  dataDir: string;
  databaseUrl?: string;
  publicUrl: string;
  playbackDomain: string;
  embedDomain: string;
  logLevel: Env['LOG_LEVEL'];
  bodyLimit: number;
  listDefaultCap: number;
  /** Resolved at start-up (runtime.ts) when not configured. */
  signingSecret?: string;
}

export class ConfigError extends Error {}

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
  const e = converted as Env;
  const hostForUrl = e.HOST === '0.0.0.0' || e.HOST === '::' ? '127.0.0.1' : e.HOST;
  const publicUrl = (e.PUBLIC_URL ?? `http://${hostForUrl}:${e.PORT}`).replace(/\/+$/, '');
  const publicHost = new URL(publicUrl).host;
  return {
    role: e.ROLE,
    workerConcurrency: e.WORKER_CONCURRENCY,
    host: e.HOST,
    port: e.PORT,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    publicUrl,
    playbackDomain: e.PLAYBACK_DOMAIN ?? publicHost,
    embedDomain: e.EMBED_DOMAIN ?? publicHost,
    logLevel: e.LOG_LEVEL,
    bodyLimit: e.BODY_LIMIT,
    listDefaultCap: e.LIST_DEFAULT_CAP,
    signingSecret: e.SIGNING_SECRET,
  };
}
