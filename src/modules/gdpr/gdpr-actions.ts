import { distinctAddresses } from '../../mail/addresses.ts';
import { outranksOrEquals, type Role } from '../roles/permissions.ts';
import { toUser } from '../users/users.service.ts';
import type { GdprRepository } from './gdpr.repository.ts';
import type { GdprAction, GdprNewValues } from './gdpr.schemas.ts';

/** A request that cannot be carried out as asked (recorded as `failed` with this message). */
export class GdprFailure extends Error {}

type StakeholderRow = Awaited<ReturnType<GdprRepository['stakeholderEmailsPage']>>[number];

/** Everything of one organization that names the request's address, gathered before acting. */
export interface GdprSubject {
  repo: GdprRepository;
  organizationId: number;
  email: string;
  now: number;
  /** Role of the token that filed the request. */
  actor: Role;
  user: Awaited<ReturnType<GdprRepository['findUser']>>;
  userRole: Role | null;
  matches: (address: string) => boolean;
  stakeholder: Array<{ row: StakeholderRow; recipients: string[] }>;
  live: Awaited<ReturnType<GdprRepository['liveInstances']>>;
  /** Queued and past jobs that carry the address, found by the job_subjects index (analytics messages, stakeholder mails). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- job payloads as stored (JSON), matched field by field in GdprService.messagesOf.
  messages: { identified: Array<{ id: number; status: string; payload: any; body: any }>; mails: Array<{ id: number; payload: any }> };
}

/** A user may only be erased or rewritten by a role at least as powerful. */
function assertMayChange(subject: GdprSubject, verb: string): void {
  const { user, userRole, actor } = subject;
  if (user && userRole && !outranksOrEquals(actor, userRole)) {
    throw new GdprFailure(`The ${actor} role that filed the request may not ${verb} a user with the ${userRole} role`);
  }
}

/** access: everything stored about the address, as one document. */
async function exportData(subject: GdprSubject): Promise<unknown> {
  const { repo, organizationId: orgId, email, now, user, stakeholder, live, messages } = subject;
  return {
    email,
    exported_at: now,
    users: user ? [toUser(user)] : [],
    team_memberships: user ? (await repo.teamsOf(user.id)).map((t) => ({ team_id: t.id, name: t.name, is_admin: Boolean(t.is_admin) })) : [],
    api_tokens: user ? (await repo.tokensOf(user.id)).map((t) => ({ id: t.id, name: t.name, role: t.role, created_at: Number(t.created_at) })) : [],
    access_managers: user
      ? (await repo.moderatedBy(orgId, user.id)).map((a) => ({ id: a.id, player_id: a.player_id, player_uuid: a.player_uuid, role: 'moderator' }))
      : [],
    stakeholder_emails: stakeholder.map(({ row: s }) => ({
      id: s.id,
      recipient: email,
      subject: s.subject,
      body: s.body,
      player_id: s.player_id,
      status: s.status,
      created_at: Number(s.created_at),
      sent_at: s.sent_at === null ? null : Number(s.sent_at),
    })),
    live_stream_instances: live.map((l) => ({
      id: l.id,
      stream_id: l.stream_id,
      name: l.name,
      player_uuid: l.player_uuid,
      status: l.status,
      email: l.email,
      created_at: Number(l.created_at),
    })),
    analytics_reports: (await repo.analyticsSessionsOf(orgId, email.toLowerCase())).map((r) => ({
      ...r,
      // Another person who gave an address in the same load is not named here.
      email: r.email !== null && r.email !== email.toLowerCase() ? '(another address)' : r.email,
      watched_seconds: r.watched_seconds === null ? null : Number(r.watched_seconds),
      created_at: Number(r.created_at),
    })),
    analytics_identified_views: messages.identified.map(({ body, status }) => ({
      player_uuid: body.player_uuid,
      player_name: body.player_name,
      video_id: body.video_id,
      visitor_vidyard_uuid: body.visitor_vidyard_uuid,
      timestamp: body.timestamp,
      delivery: status,
    })),
  };
}

/** forget: the user erased, the address removed from every record and queued message. */
async function forget(subject: GdprSubject): Promise<unknown> {
  const { repo, organizationId: orgId, now, user, matches, stakeholder, live, messages } = subject;
  assertMayChange(subject, 'erase');
  if (user) {
    await repo.clearModerator(orgId, user.id);
    await repo.deleteUser(orgId, user.id);
  }
  for (const { row: s, recipients } of stakeholder)
    await repo.setRecipients(
      s.id,
      recipients.filter((r) => !matches(r)),
    );
  await repo.setLiveInstanceEmail(
    orgId,
    live.map((l) => l.id),
    null,
    now,
  );
  // Analytics messages that name the person are dropped, sent or not (their job_subjects go with them);
  // mails lose the address, in the payload and in the index.
  await repo.deleteJobs(messages.identified.map((m) => m.id));
  // Stored analytics: every report of the loads in which the person gave the address.
  const reportsDeleted = await repo.deleteAnalyticsSessions(orgId, subject.email.toLowerCase());
  for (const mail of messages.mails) {
    const to = mail.payload.mail.to.filter((r: string) => !matches(r));
    if (to.length === 0) await repo.deleteJobs([mail.id]);
    else {
      await repo.setJobPayload(mail.id, { ...mail.payload, mail: { ...mail.payload.mail, to } });
      await repo.dropJobSubject(mail.id, subject.email);
    }
  }
  return {
    users_deleted: user ? 1 : 0,
    stakeholder_emails_scrubbed: stakeholder.length,
    live_stream_instances_scrubbed: live.length,
    analytics_messages_deleted: messages.identified.length,
    analytics_reports_deleted: reportsDeleted,
  };
}

/** rectify: the user's fields and, with a new address, every record and queued message rewritten. */
async function rectify(subject: GdprSubject, values: GdprNewValues): Promise<unknown> {
  const { repo, organizationId: orgId, email, now, user, matches, stakeholder, live, messages } = subject;
  const newEmail = values.email !== undefined && values.email !== email ? values.email : undefined;
  assertMayChange(subject, 'rectify');
  let usersUpdated = 0;
  if (user) {
    if (newEmail !== undefined && (await repo.findUser(orgId, newEmail))) {
      throw new GdprFailure(`new_values.email ${newEmail} is already used by another user of this organization`);
    }
    const changes: { email?: string; first_name?: string; last_name?: string } = {};
    if (newEmail !== undefined) changes.email = newEmail;
    if (values.first_name !== undefined) changes.first_name = values.first_name;
    if (values.last_name !== undefined) changes.last_name = values.last_name;
    if (Object.keys(changes).length > 0) {
      await repo.updateUser(orgId, user.id, { ...changes, updated_at: now });
      usersUpdated = 1;
    }
  }
  let stakeholderUpdated = 0;
  let liveUpdated = 0;
  let reportsUpdated = 0;
  if (newEmail !== undefined) {
    const rectified = (recipients: string[]) => distinctAddresses(recipients.map((r) => (matches(r) ? newEmail : r)));
    for (const { row: s, recipients } of stakeholder) {
      await repo.setRecipients(s.id, rectified(recipients));
      stakeholderUpdated++;
    }
    await repo.setLiveInstanceEmail(
      orgId,
      live.map((l) => l.id),
      newEmail,
      now,
    );
    liveUpdated = live.length;
    reportsUpdated = await repo.renameAnalyticsEmail(orgId, email.toLowerCase(), newEmail.toLowerCase());
    // The payloads and their index entries (job_subjects) alike.
    for (const m of messages.identified) {
      await repo.setJobPayload(m.id, { ...m.payload, body: { ...m.body, email: newEmail } });
      await repo.renameJobSubject(m.id, orgId, email, newEmail);
    }
    for (const mail of messages.mails) {
      await repo.setJobPayload(mail.id, { ...mail.payload, mail: { ...mail.payload.mail, to: rectified(mail.payload.mail.to) } });
      await repo.renameJobSubject(mail.id, orgId, email, newEmail);
    }
  }
  return {
    users_updated: usersUpdated,
    stakeholder_emails_updated: stakeholderUpdated,
    live_stream_instances_updated: liveUpdated,
    analytics_messages_updated: newEmail !== undefined ? messages.identified.length : 0,
    analytics_reports_updated: reportsUpdated,
    ...(values.company !== undefined ? { company: 'not stored by Reelbase: nothing to rectify' } : {}),
  };
}

export const GDPR_ACTIONS: Record<GdprAction, (subject: GdprSubject, values: GdprNewValues) => Promise<unknown>> = { access: exportData, forget, rectify };
