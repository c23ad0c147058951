import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import type { DB, GdprRequestsTable } from '../../db/schema.ts';
import { laterOf } from '../../db/dialect.ts';

export type GdprRequestRow = Selectable<GdprRequestsTable>;

/** Queries of the GDPR area: the requests, and every table of an organization that holds a person's email. */
export class GdprRepository {
  constructor(private readonly db: Kysely<DB>) {}

  with(db: Kysely<DB>) {
    return new GdprRepository(db);
  }

  insert(row: Insertable<GdprRequestsTable>): Promise<GdprRequestRow> {
    return this.db.insertInto('gdpr_requests').values(row).returningAll().executeTakeFirstOrThrow();
  }

  findByReceipt(organizationId: number, receiptId: string): Promise<GdprRequestRow | undefined> {
    return this.db.selectFrom('gdpr_requests').selectAll().where('organization_id', '=', organizationId).where('receipt_id', '=', receiptId).executeTakeFirst();
  }

  find(id: number): Promise<GdprRequestRow | undefined> {
    return this.db.selectFrom('gdpr_requests').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async update(id: number, values: Updateable<GdprRequestsTable>): Promise<void> {
    await this.db.updateTable('gdpr_requests').set(values).where('id', '=', id).execute();
  }

  /** Users are stored with a lower-case email, unique in the organization. */
  findUser(organizationId: number, email: string) {
    return this.db.selectFrom('users').selectAll().where('organization_id', '=', organizationId).where('email', '=', email).executeTakeFirst();
  }

  teamsOf(userId: number) {
    return this.db
      .selectFrom('team_members')
      .innerJoin('teams', 'teams.id', 'team_members.team_id')
      .select(['teams.id', 'teams.name', 'teams.is_admin'])
      .where('team_members.user_id', '=', userId)
      .orderBy('teams.id')
      .execute();
  }

  tokensOf(userId: number) {
    return this.db.selectFrom('api_tokens').select(['id', 'name', 'role', 'created_at']).where('user_id', '=', userId).orderBy('id').execute();
  }

  moderatedBy(organizationId: number, userId: number) {
    return this.db
      .selectFrom('access_managers')
      .innerJoin('players', 'players.id', 'access_managers.player_id')
      .select(['access_managers.id', 'access_managers.player_id', 'players.uuid as player_uuid'])
      .where('access_managers.organization_id', '=', organizationId)
      .where('access_managers.moderator_id', '=', userId)
      .orderBy('access_managers.id')
      .execute();
  }

  async clearModerator(organizationId: number, userId: number): Promise<void> {
    await this.db
      .updateTable('access_managers')
      .set({ moderator_id: null })
      .where('organization_id', '=', organizationId)
      .where('moderator_id', '=', userId)
      .execute();
  }

  async deleteUser(organizationId: number, userId: number): Promise<void> {
    await this.db.deleteFrom('api_tokens').where('organization_id', '=', organizationId).where('user_id', '=', userId).execute();
    await this.db.deleteFrom('team_members').where('user_id', '=', userId).execute();
    await this.db.deleteFrom('users').where('organization_id', '=', organizationId).where('id', '=', userId).execute();
  }

  async updateUser(organizationId: number, userId: number, values: Updateable<DB['users']>): Promise<void> {
    await this.db.updateTable('users').set(values).where('organization_id', '=', organizationId).where('id', '=', userId).execute();
  }

  /** One page of the organization's stakeholder emails, by id (recipients are a JSON list, matched in code). */
  stakeholderEmailsPage(organizationId: number, afterId: number, limit: number) {
    return this.db
      .selectFrom('stakeholder_emails')
      .select(['id', 'recipients', 'subject', 'body', 'player_id', 'status', 'created_at', 'sent_at'])
      .where('organization_id', '=', organizationId)
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(limit)
      .execute();
  }

  async setRecipients(id: number, recipients: string[]): Promise<void> {
    await this.db
      .updateTable('stakeholder_emails')
      .set({ recipients: JSON.stringify(recipients) })
      .where('id', '=', id)
      .execute();
  }

  /** Live stream instances whose creator email is `email` (case-insensitive). */
  liveInstances(organizationId: number, email: string) {
    return this.db
      .selectFrom('live_stream_instances')
      .select(['id', 'stream_id', 'name', 'player_uuid', 'email', 'status', 'created_at'])
      .where('organization_id', '=', organizationId)
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email))
      .orderBy('id')
      .execute();
  }

  async setLiveInstanceEmail(organizationId: number, ids: number[], email: string | null, now: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable('live_stream_instances')
      .set({ email, updated_at: now })
      .where('organization_id', '=', organizationId)
      .where('id', 'in', ids)
      .execute();
  }

  /**
   * Jobs that name `email` for the organization, found by the job_subjects index (never by reading
   * payloads): analytics messages and stakeholder mails, queued or past, not running. A page by id.
   */
  jobsNaming(organizationId: number, email: string, afterId: number, limit: number) {
    return this.db
      .selectFrom('job_subjects')
      .innerJoin('jobs', 'jobs.id', 'job_subjects.job_id')
      .select(['jobs.id', 'jobs.type', 'jobs.status', 'jobs.payload'])
      .where('job_subjects.organization_id', '=', organizationId)
      .where('job_subjects.email', '=', email)
      .where('jobs.status', '!=', 'running')
      .where('jobs.id', '>', afterId)
      .orderBy('jobs.id')
      .limit(limit)
      .execute();
  }

  /** The job no longer names `email` (it was removed from its payload). */
  async dropJobSubject(jobId: number, email: string): Promise<void> {
    await this.db.deleteFrom('job_subjects').where('job_id', '=', jobId).where('email', '=', email).execute();
  }

  /** The job names `to` where it named `from` (its payload was rewritten). */
  async renameJobSubject(jobId: number, organizationId: number, from: string, to: string): Promise<void> {
    await this.dropJobSubject(jobId, from);
    await this.db
      .insertInto('job_subjects')
      .values({ job_id: jobId, organization_id: organizationId, email: to })
      .onConflict((oc) => oc.columns(['job_id', 'email']).doNothing())
      .execute();
  }

  async deleteJobs(ids: number[]): Promise<void> {
    if (ids.length > 0) await this.db.deleteFrom('jobs').where('id', 'in', ids).where('status', '!=', 'running').execute();
  }

  async setJobPayload(id: number, payload: unknown): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ payload: JSON.stringify(payload) })
      .where('id', '=', id)
      .where('status', '!=', 'running')
      .execute();
  }

  /** The stored viewing reports of the sessions (player loads) in which the address was given. */
  analyticsSessionsOf(organizationId: number, email: string) {
    return this.db
      .selectFrom('analytics_events')
      .select([
        'player_id',
        'video_id',
        'chapter',
        'type',
        'percent',
        'event_id',
        'watched_seconds',
        'email',
        'session_id',
        'origin',
        'device',
        'browser',
        'created_at',
      ])
      .where('organization_id', '=', organizationId)
      .where('session_id', 'in', (eb) =>
        eb.selectFrom('analytics_events').select('session_id').where('organization_id', '=', organizationId).where('email', '=', email),
      )
      .orderBy('id')
      .execute();
  }

  /**
   * Erases the stored reports of the sessions in which the address was given. Another address given in
   * one of those sessions keeps its entry among the identified only as far as its other reports do.
   */
  async deleteAnalyticsSessions(organizationId: number, email: string): Promise<number> {
    const sessions = this.db.selectFrom('analytics_events').select('session_id').where('organization_id', '=', organizationId).where('email', '=', email);
    const named = await this.db
      .selectFrom('analytics_events')
      .select('email')
      .distinct()
      .where('organization_id', '=', organizationId)
      .where('type', '=', 'identified_view')
      .where('session_id', 'in', sessions)
      .execute();
    const result = await this.db
      .deleteFrom('analytics_events')
      .where('organization_id', '=', organizationId)
      .where('session_id', 'in', sessions)
      .executeTakeFirst();
    // Each address's rows among the identified (the organization's, and each player's) as far as its other reports go.
    // In address order, as ingest writes them: on PostgreSQL, two writers taking rows in opposite orders deadlock.
    for (const address of [...new Set([email, ...named.map((r) => r.email!)])].sort()) {
      await this.db.deleteFrom('analytics_identified').where('organization_id', '=', organizationId).where('email', '=', address).execute();
      await this.db.deleteFrom('analytics_identified_players').where('organization_id', '=', organizationId).where('email', '=', address).execute();
      const left = await this.db
        .selectFrom('analytics_events')
        .select(['player_id', (eb) => eb.fn.max('created_at').as('last_seen')])
        .where('organization_id', '=', organizationId)
        .where('type', '=', 'identified_view')
        .where('email', '=', address)
        .groupBy('player_id')
        .execute();
      if (left.length === 0) continue;
      // As ingest writes them (the organization's row, then the players' in order), and as upserts: a
      // viewer may give the address again meanwhile.
      const players = left
        .map((r) => ({ organization_id: organizationId, player_id: r.player_id, email: address, last_seen: Number(r.last_seen) }))
        .sort((a, b) => a.player_id - b.player_id);
      const lastSeen = Math.max(...players.map((p) => p.last_seen));
      await this.db
        .insertInto('analytics_identified')
        .values({ organization_id: organizationId, email: address, last_seen: lastSeen })
        .onConflict((oc) => oc.columns(['organization_id', 'email']).doUpdateSet({ last_seen: laterOf('analytics_identified', 'last_seen') }))
        .execute();
      await this.db
        .insertInto('analytics_identified_players')
        .values(players)
        .onConflict((oc) =>
          oc.columns(['organization_id', 'player_id', 'email']).doUpdateSet({ last_seen: laterOf('analytics_identified_players', 'last_seen') }),
        )
        .execute();
    }
    return Number(result.numDeletedRows);
  }

  /** Rewrites the address in the stored reports and among the identified (merged with the new address's entry). */
  async renameAnalyticsEmail(organizationId: number, from: string, to: string): Promise<number> {
    const old = await this.db
      .deleteFrom('analytics_identified')
      .where('organization_id', '=', organizationId)
      .where('email', '=', from)
      .returning('last_seen')
      .executeTakeFirst();
    if (old) {
      await this.db
        .insertInto('analytics_identified')
        .values({ organization_id: organizationId, email: to, last_seen: old.last_seen })
        .onConflict((oc) => oc.columns(['organization_id', 'email']).doUpdateSet({ last_seen: laterOf('analytics_identified', 'last_seen') }))
        .execute();
    }
    const atPlayers = await this.db
      .deleteFrom('analytics_identified_players')
      .where('organization_id', '=', organizationId)
      .where('email', '=', from)
      .returning(['player_id', 'last_seen'])
      .execute();
    if (atPlayers.length > 0) {
      await this.db
        .insertInto('analytics_identified_players')
        .values(atPlayers.map((r) => ({ organization_id: organizationId, player_id: r.player_id, email: to, last_seen: r.last_seen })))
        .onConflict((oc) =>
          oc.columns(['organization_id', 'player_id', 'email']).doUpdateSet({ last_seen: laterOf('analytics_identified_players', 'last_seen') }),
        )
        .execute();
    }
    const result = await this.db
      .updateTable('analytics_events')
      .set({ email: to, dedup_key: sql<string>`replace(dedup_key, ${`:identified:${from}`}, ${`:identified:${to}`})` })
      .where('organization_id', '=', organizationId)
      .where('email', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
