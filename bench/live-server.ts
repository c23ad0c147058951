import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config.ts';
import { createContainer, type Container } from '../src/container.ts';
import { openDatabase } from '../src/db/database.ts';
import { migrateToLatest } from '../src/db/migrate.ts';
import { LiveIngest } from '../src/modules/live/live-ingest.ts';
import { freePort } from '../test/helpers/processes.ts';

type InstanceDetails = Awaited<ReturnType<Container['services']['live']['get']>>['instance_details'];

/** A Reelbase with its RTMP ingest on loopback, an organization, and its own SQLite in a temporary folder. */
export interface LiveBenchServer {
  config: Config;
  container: Container;
  app: FastifyInstance;
  ingest: LiveIngest;
  /** A live stream of the organization: its instance id and what an encoder and a viewer need. */
  createInstance(options: { name: string; segmentLength: 1 | 4 | 10; dvr: boolean }): Promise<{ id: number; details: InstanceDetails }>;
  close(): Promise<void>;
}

/**
 * Starts the live benches' server. `listen`: on a loopback port that PUBLIC_URL names (for a browser);
 * else requests are injected. `env` adds to the configuration.
 */
export async function startLiveServer(
  name: string,
  { listen = false, env = {} }: { listen?: boolean; env?: Record<string, string> } = {},
): Promise<LiveBenchServer> {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), `reelbase-${name}-bench-`));
  const httpPort = listen ? await freePort() : 0;
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    PUBLIC_URL: listen ? `http://127.0.0.1:${httpPort}` : 'http://bench.test',
    SIGNING_SECRET: `${name}-bench-signing-secret-0123456789`,
    RTMP_PORT: String(await freePort()),
    INGEST_HOST: '127.0.0.1',
    ...env,
  });
  const database = openDatabase({ sqlitePath: path.join(dataDir, 'bench.sqlite') });
  await migrateToLatest(database.db);
  const container = createContainer({ config, database });
  const app = await buildApp({ config, database, container });
  if (listen) await app.listen({ host: '127.0.0.1', port: httpPort });
  const ingest = new LiveIngest(config, container.services.liveState, container.media);
  await ingest.start();
  const { organization } = await container.services.organizations.createWithOwner(`${name} bench`);
  const auth = { tokenId: 0, organizationId: organization.id, userId: null, role: 'owner' as const };
  const live = container.services.live;
  return {
    config,
    container,
    app,
    ingest,
    async createInstance({ name: videoName, segmentLength, dvr }) {
      const { stream_instance_id: id } = await live.create(auth, organization.id, {
        video_options: {
          video_name: videoName,
          description: '',
          stream_tags: [],
          segment_length: segmentLength,
          dvr_enabled: dvr,
          disable_notifications: true,
        },
      });
      return { id, details: (await live.get(auth, organization.id, id)).instance_details };
    },
    async close() {
      await ingest.stop();
      await app.close();
      await database.destroy();
      await fsp.rm(dataDir, { recursive: true, force: true });
    },
  };
}
