import net from 'node:net';
import pg from 'pg';
import { TEST_SCHEMA_PREFIX } from './harness.ts';

/** A TCP port free on 127.0.0.1 right now (for a server a test starts as a process, or on a real port). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * The environment that points a Reelbase process (or the CLI) at a fresh PostgreSQL schema of this
 * test run, named `name` (the global teardown drops it with the run's others).
 */
export async function freshSchemaEnv(name: string): Promise<{ DATABASE_URL: string; PGOPTIONS: string }> {
  const url = process.env.TEST_DATABASE_URL!;
  const schema = `${TEST_SCHEMA_PREFIX}${process.env.REELBASE_TEST_RUN ?? 'norun'}_${name}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.query(`create schema ${schema}`);
  } finally {
    await admin.end();
  }
  return { DATABASE_URL: url, PGOPTIONS: `-c search_path=${schema}` };
}

/** Polls `check` every 50 ms until it answers something truthy (a throw counts as not yet). */
export async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
