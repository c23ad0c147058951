import pg from 'pg';

const PREFIX = 'rbtest_';

/** Drops the schemas test files made (before a run: leftovers of an interrupted one; after it: this run's). */
async function dropTestSchemas(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>(
      `select nspname from pg_namespace where nspname like $1`,
      [`${PREFIX.replace(/_/g, '\\_')}%`],
    );
    for (const { nspname } of rows) await client.query(`drop schema if exists "${nspname}" cascade`);
  } finally {
    await client.end();
  }
}

export async function setup(): Promise<void> {
  await dropTestSchemas();
}

export async function teardown(): Promise<void> {
  await dropTestSchemas();
}
