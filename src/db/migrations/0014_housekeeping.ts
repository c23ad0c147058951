import type { Kysely } from 'kysely';
import { bigint } from '../dialect.ts';

/** The sweep's attempts (as `housekeeping.sweep` in src/modules/job-kinds.ts; frozen here). */
const SWEEP_MAX_ATTEMPTS = 100;
/** The first sweep runs this long after the migration (docs/jobs.md, "Retention"). */
const FIRST_SWEEP_DELAY_MS = 60_000;
const BACKFILL_PAGE = 500;

/**
 * Housekeeping (docs/jobs.md, "Retention") and the index of the people a job names (docs/gdpr.md):
 *
 * - `job_subjects`: one row per job and address the job's payload carries (an `identified_view`
 *   analytics message, a stakeholder mail), lower-cased, with the organization whose record it is. A
 *   GDPR request finds those jobs through (organization_id, email) instead of reading every payload;
 *   the rows go with their job (on delete cascade). Jobs already queued or kept are indexed here once.
 * - `housekeeping_tasks`: one row per recurring task; the sweep locks it while it decides whether the
 *   next run is already queued (so that at most one is, however many workers ask), and records the
 *   outcome of the last run.
 * - `idempotency_keys (created_at)`: the sweep deletes the keys past their 24 h window by range.
 * - The first `housekeeping.sweep` job; every run queues the next one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('job_subjects')
    .addColumn('job_id', 'integer', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('organization_id', 'integer', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_subjects_pk', ['job_id', 'email'])
    .execute();
  await db.schema.createIndex('job_subjects_lookup_idx').on('job_subjects').columns(['organization_id', 'email']).execute();

  await db.schema
    .createTable('housekeeping_tasks')
    .addColumn('task', 'text', (c) => c.primaryKey().notNull())
    .addColumn('last_started_at', bigint)
    .addColumn('last_finished_at', bigint)
    .addColumn('last_result', 'text')
    .execute();
  await db.insertInto('housekeeping_tasks').values({ task: 'sweep' }).execute();

  await db.schema.createIndex('idempotency_keys_created_idx').on('idempotency_keys').column('created_at').execute();

  await indexJobSubjects(db);

  const now = Date.now();
  await db
    .insertInto('jobs')
    .values({
      type: 'housekeeping.sweep',
      payload: '{}',
      max_attempts: SWEEP_MAX_ATTEMPTS,
      run_at: now + FIRST_SWEEP_DELAY_MS,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('jobs').where('type', '=', 'housekeeping.sweep').execute();
  await db.schema.dropIndex('idempotency_keys_created_idx').execute();
  await db.schema.dropTable('housekeeping_tasks').execute();
  await db.schema.dropTable('job_subjects').execute();
}

const addressOf = (value: unknown): string | null => (typeof value === 'string' && value.includes('@') ? value.trim().toLowerCase() : null);

function parse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/**
 * Indexes the jobs present before job_subjects existed, the way the services index new ones: an
 * analytics message by the `email` of its body (organization_id from the body), a stakeholder mail by
 * each address of its `to` (the organization of its stakeholder email). Read once, a page at a time.
 */
export async function indexJobSubjects(db: Kysely<any>): Promise<void> {
  for (let after = 0; ;) {
    const page: Array<{ id: number; type: string; payload: string }> = await db
      .selectFrom('jobs')
      .select(['id', 'type', 'payload'])
      .where('type', 'in', ['webhook.notify', 'mail.stakeholder'])
      .where('id', '>', after)
      .where('payload', 'like', '%@%')
      .orderBy('id')
      .limit(BACKFILL_PAGE)
      .execute();
    const rows: Array<{ job_id: number; organization_id: number; email: string }> = [];
    for (const job of page) {
      const payload = parse(job.payload);
      if (!payload || typeof payload !== 'object') continue;
      if (job.type === 'webhook.notify') {
        const email = addressOf(payload.body?.email);
        const organizationId = payload.body?.organization_id;
        if (email && Number.isInteger(organizationId)) rows.push({ job_id: job.id, organization_id: organizationId, email });
      } else if (Number.isInteger(payload.emailId) && Array.isArray(payload.mail?.to)) {
        const owner = await db.selectFrom('stakeholder_emails').select('organization_id').where('id', '=', payload.emailId).executeTakeFirst();
        if (!owner) continue;
        const emails = new Set((payload.mail.to as unknown[]).map(addressOf).filter((e): e is string => e !== null));
        for (const email of emails) rows.push({ job_id: job.id, organization_id: Number(owner.organization_id), email });
      }
    }
    if (rows.length > 0) {
      // The organization may be gone (its jobs stay): such rows are left out.
      const organizations = new Set(
        (
          await db
            .selectFrom('organizations')
            .select('id')
            .where('id', 'in', [...new Set(rows.map((r) => r.organization_id))])
            .execute()
        ).map((o: { id: number }) => Number(o.id)),
      );
      const kept = rows.filter((r) => organizations.has(r.organization_id));
      if (kept.length > 0)
        await db
          .insertInto('job_subjects')
          .values(kept)
          .onConflict((oc) => oc.columns(['job_id', 'email']).doNothing())
          .execute();
    }
    if (page.length < BACKFILL_PAGE) return;
    after = page[page.length - 1].id;
  }
}
