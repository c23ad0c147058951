import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { createContainer, type Container, type Services } from '../../src/container.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { openDatabase, type Database, type DialectName } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL is set. */
/** Every PostgreSQL schema a test makes starts with this; the global setup drops them. */
export const TEST_SCHEMA_PREFIX = 'rbtest_';

export const dialects: DialectName[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export interface TestApp {
  app: FastifyInstance;
  database: Database;
  config: Config;
  dialect: DialectName;
  /** The app's composition root, and its services (for setup a test does not do through the wire). */
  container: Container;
  services: Services;
  /** A second connection to the same store, as another process (the CLI, a worker) would open. */
  openAnother(): Database;
  close(): Promise<void>;
}

/** A fresh app on a fresh database: in-memory SQLite, or a PostgreSQL schema of its own. */
export async function createTestApp(
  dialect: DialectName,
  env: Record<string, string> = {},
  options: { logStream?: { write(line: string): void }; sqlitePath?: string } = {},
): Promise<TestApp> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: '/tmp/reelbase-test',
    PUBLIC_URL: 'http://reelbase.test',
    SIGNING_SECRET: 'test-signing-secret-0123456789',
    ...env,
  });
  let database: Database;
  let openAnother: () => Database;
  if (dialect === 'postgres') {
    const url = process.env.TEST_DATABASE_URL!;
    // Named after the run (test/helpers/global-setup.ts), so that concurrent runs leave each other's alone.
    const schema = `${TEST_SCHEMA_PREFIX}${process.env.REELBASE_TEST_RUN ?? 'norun'}_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    // Schemas are dropped by the global teardown, once no test file runs: dropping one while another
    // file's migrator introspects the catalog makes that introspection fail.
    database = openDatabase({ url, pgSchema: schema, poolSize: 5 });
    openAnother = () => openDatabase({ url, pgSchema: schema, poolSize: 2 });
  } else {
    const sqlitePath = options.sqlitePath ?? ':memory:';
    database = openDatabase({ sqlitePath });
    openAnother = () => {
      if (sqlitePath === ':memory:') throw new Error('openAnother needs createTestApp(..., { sqlitePath })');
      return openDatabase({ sqlitePath });
    };
  }
  await migrateToLatest(database.db);
  const container = createContainer({ config, database });
  const app = await buildApp({ config, database, container, logStream: options.logStream });
  return {
    app,
    database,
    config,
    dialect,
    container,
    services: container.services,
    openAnother,
    async close() {
      await app.close();
      await database.destroy();
    },
  };
}

export interface Response<T = any> {
  status: number;
  body: T;
  headers: Record<string, string | string[] | number | undefined>;
  raw: string;
}

/** A small HTTP client over inject, authenticated with a token (Bearer) unless told otherwise. */
export function client(app: FastifyInstance, token?: string) {
  async function request<T = any>(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response<T>> {
    const allHeaders: Record<string, string> = { ...(token ? { authorization: `Bearer ${token}` } : {}) };
    // A string body is sent as it is (e.g. malformed JSON); objects are sent as JSON.
    if (typeof body === 'string') allHeaders['content-type'] = 'application/json';
    Object.assign(allHeaders, headers);
    const res = await app.inject({
      method: method as InjectOptions['method'],
      url,
      headers: allHeaders,
      ...(body === undefined ? {} : { payload: body as string | object }),
    });
    let parsed: unknown = res.body;
    if (String(res.headers['content-type'] ?? '').includes('json')) {
      try {
        parsed = JSON.parse(res.body);
      } catch {
        parsed = res.body;
      }
    }
    return { status: res.statusCode, body: parsed as T, headers: res.headers, raw: res.body };
  }
  return {
    get: <T = any>(url: string, headers?: Record<string, string>) => request<T>('GET', url, undefined, headers),
    post: <T = any>(url: string, body?: unknown, headers?: Record<string, string>) => request<T>('POST', url, body ?? {}, headers),
    put: <T = any>(url: string, body?: unknown, headers?: Record<string, string>) => request<T>('PUT', url, body ?? {}, headers),
    patch: <T = any>(url: string, body?: unknown, headers?: Record<string, string>) => request<T>('PATCH', url, body ?? {}, headers),
    delete: <T = any>(url: string, headers?: Record<string, string>) => request<T>('DELETE', url, undefined, headers),
    request,
  };
}

export type Client = ReturnType<typeof client>;
