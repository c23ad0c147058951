import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { AppError, invalidField } from '../../lib/errors.ts';
import { hashToken } from '../../lib/tokens.ts';
import { nowSeconds } from '../../lib/time.ts';
import type { Mailer } from '../../mail/mailer.ts';
import { enqueue } from '../job-kinds.ts';
import { isRole, RoleIds, type Role } from '../roles/permissions.ts';
import type { AuthContext } from '../tokens/auth-context.ts';
import { decoyHash, hashPassword, passwordProblem, verifyPassword } from './passwords.ts';
import type { LinkPurpose, SessionsRepository } from './sessions.repository.ts';

export interface SessionOptions {
  publicUrl: string;
  sessionDays: number;
  invitationDays: number;
}

/** How long a password reset link works. */
const RESET_SECONDS = 3600;

/** Who is signed in, as the dashboard shows it. */
export interface SessionView {
  user: { id: number; email: string; first_name: string; last_name: string; role_id: number; role: Role };
  organization: { id: number; name: string };
  csrf_token: string;
  expires_at: number;
}

/** A new session: its view, and the secret the cookie carries (only its hash is stored). */
export interface NewSession {
  view: SessionView;
  secret: string;
}

/** What a link is for and whom, before it is used (the page asks for a password). */
export interface LinkView {
  purpose: LinkPurpose;
  email: string;
  first_name: string;
  last_name: string;
  organization: { id: number; name: string };
  expires_at: number;
}

/** A session found by its cookie: who it acts for, and the token its state-changing requests must echo. */
export interface SessionAuth extends AuthContext {
  csrfToken: string;
}

const wrongCredentials = () => new AppError('unauthorized', 'Wrong email or password');
const deadLink = () => new AppError('not_found', '404: This link is unknown, used or expired');
const secret = () => randomBytes(32).toString('base64url');

/**
 * People signing in (docs/sign-in.md): passwords, sessions, and the invitation and reset links that
 * are mailed to them. Sessions act with the user's role; a session whose user changed role or was
 * removed is over at once.
 */
export class SessionsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: SessionsRepository,
    private readonly mailer: Mailer,
    private readonly options: SessionOptions,
  ) {}

  /** Signs in with an address and a password; `organizationId` picks one of several accounts of the same address. */
  async signIn(email: string, password: string, organizationId?: number): Promise<NewSession> {
    const address = email.trim().toLowerCase();
    const candidates = (await this.repo.usersByEmail(address)).filter(
      (u) => u.hash !== null && (organizationId === undefined || u.organization_id === organizationId),
    );
    if (candidates.length === 0) {
      await verifyPassword(password, await decoyHash());
      throw wrongCredentials();
    }
    for (const candidate of candidates) {
      if (await verifyPassword(password, candidate.hash!)) return this.startSession(this.db, candidate.id);
    }
    throw wrongCredentials();
  }

  /** The session a cookie carries, or null when it is unknown, expired, or its user changed role or left. */
  async authenticate(sessionSecret: string): Promise<SessionAuth | null> {
    const row = await this.repo.session(hashToken(sessionSecret), nowSeconds());
    if (!row || row.session_role !== row.user_role || !isRole(row.user_role)) return null;
    return { tokenId: null, organizationId: row.organization_id, userId: row.user_id, role: row.user_role, csrfToken: row.csrf_token };
  }

  async current(sessionSecret: string): Promise<SessionView> {
    const row = await this.repo.session(hashToken(sessionSecret), nowSeconds());
    if (!row || row.session_role !== row.user_role) throw new AppError('unauthorized', 'Not signed in');
    return this.currentView(row.user_id, row.csrf_token, Number(row.expires_at));
  }

  async signOut(sessionSecret: string): Promise<void> {
    await this.repo.deleteSession(hashToken(sessionSecret));
  }

  /** Whether the user of this id has chosen a password (then an invitation has nothing left to do). */
  hasPassword(userId: number): Promise<boolean> {
    return this.repo.hasPassword(userId);
  }

  /** A new invitation link for a user (earlier ones stop working): for the CLI, which prints it. */
  invitationUrl(userId: number): Promise<string> {
    return this.db.transaction().execute((trx) => this.newLink(trx, userId, 'invite'));
  }

  /** Queues the mail of an invitation, in the caller's transaction (the user's creation). */
  async queueInvitation(trx: Kysely<DB>, userId: number): Promise<void> {
    await enqueue(trx, 'account.mail', { userId, purpose: 'invite' });
  }

  /**
   * Mails a reset link to every account of the address that has a password. Answers nothing either
   * way: whether an address has an account is not told.
   */
  async requestReset(email: string): Promise<void> {
    const accounts = (await this.repo.usersByEmail(email.trim().toLowerCase())).filter((u) => u.hash !== null);
    if (accounts.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const account of accounts) await enqueue(trx, 'account.mail', { userId: account.id, purpose: 'reset' });
    });
  }

  /** The job of `account.mail`: a new link of the purpose, mailed to the user (nothing when the user is gone). */
  async mailLink(userId: number, purpose: LinkPurpose): Promise<void> {
    const user = await this.repo.user(userId);
    if (!user) return;
    // A reset for a user who has no password yet is their invitation again.
    const url = await this.db.transaction().execute((trx) => this.newLink(trx, userId, purpose));
    const expiry = purpose === 'invite' ? `${this.options.invitationDays} days` : 'an hour';
    const mail =
      purpose === 'invite'
        ? {
            subject: `You are invited to ${user.organization_name} on Reelbase`,
            text: `You have been invited to ${user.organization_name} on Reelbase as ${user.role}.\n\nOpen this link to choose your password and sign in:\n${url}\n\nThe link works once, within ${expiry}.\n`,
          }
        : {
            subject: 'Reset your Reelbase password',
            text: `Someone asked to reset the password of ${user.email} for ${user.organization_name} on Reelbase.\n\nOpen this link to choose a new password:\n${url}\n\nThe link works once, within ${expiry}. If you did not ask, ignore this mail: your password stays as it is.\n`,
          };
    await this.mailer.send({ to: [user.email], ...mail });
  }

  /** What a link is for, before it is used. */
  async describeLink(token: string): Promise<LinkView> {
    const link = await this.repo.link(hashToken(token), nowSeconds());
    const user = link && (await this.repo.user(link.user_id));
    if (!link || !user) throw deadLink();
    return {
      purpose: link.purpose as LinkPurpose,
      email: user.email,
      first_name: user.first_name,
      last_name: user.last_name,
      organization: { id: user.organization_id, name: user.organization_name },
      expires_at: Number(link.expires_at),
    };
  }

  /**
   * Uses a link: sets the password (ending the user's other sessions), activates an invited user,
   * spends the link, and signs the person in.
   */
  async useLink(token: string, password: string, names: { first_name?: string; last_name?: string } = {}): Promise<NewSession> {
    const tokenHash = hashToken(token);
    const link = await this.repo.link(tokenHash, nowSeconds());
    const user = link && (await this.repo.user(link.user_id));
    if (!link || !user) throw deadLink();
    const problem = passwordProblem(password, user.email);
    if (problem) throw invalidField('password', problem);
    const hash = await hashPassword(password);
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      // Spent first, by the delete itself: of two uses at once, one deletes it and the other finds nothing to delete.
      if (!(await repo.spendLink(tokenHash, nowSeconds()))) throw deadLink();
      await repo.deleteLinks(user.id, 'invite');
      await repo.deleteLinks(user.id, 'reset');
      const now = nowSeconds();
      await repo.setPassword(user.id, hash, now);
      await repo.deleteSessionsOf(user.id);
      const trimmed: { first_name?: string; last_name?: string } = {};
      if (names.first_name !== undefined) trimmed.first_name = names.first_name.trim();
      if (names.last_name !== undefined) trimmed.last_name = names.last_name.trim();
      await repo.activate(user.id, trimmed, now);
      return this.startSession(trx, user.id);
    });
  }

  /** Ends every session of a user: their role changed, or they were removed. */
  async endSessionsOf(trx: Kysely<DB>, userId: number): Promise<void> {
    await this.repo.with(trx).deleteSessionsOf(userId);
  }

  private async newLink(trx: Kysely<DB>, userId: number, purpose: LinkPurpose): Promise<string> {
    const repo = this.repo.with(trx);
    const token = secret();
    const now = nowSeconds();
    await repo.deleteLinks(userId, purpose);
    await repo.insertLink({
      token_hash: hashToken(token),
      user_id: userId,
      purpose,
      created_at: now,
      expires_at: now + (purpose === 'invite' ? this.options.invitationDays * 86_400 : RESET_SECONDS),
    });
    // In the fragment: a browser never sends it, so it reaches no log, no proxy and no Referer.
    return `${this.options.publicUrl}/app/${purpose === 'invite' ? 'invitation' : 'reset'}#token=${token}`;
  }

  private async startSession(trx: Kysely<DB>, userId: number): Promise<NewSession> {
    const repo = this.repo.with(trx);
    const user = await repo.user(userId);
    if (!user || !isRole(user.role)) throw wrongCredentials();
    const sessionSecret = secret();
    const csrf = randomBytes(24).toString('base64url');
    const now = nowSeconds();
    const expiresAt = now + this.options.sessionDays * 86_400;
    await repo.insertSession({ id_hash: hashToken(sessionSecret), user_id: userId, role: user.role, csrf_token: csrf, created_at: now, expires_at: expiresAt });
    return { secret: sessionSecret, view: viewOf(user, user.role, csrf, expiresAt) };
  }

  private async currentView(userId: number, csrf: string, expiresAt: number): Promise<SessionView> {
    const user = await this.repo.user(userId);
    if (!user || !isRole(user.role)) throw new AppError('unauthorized', 'Not signed in');
    return viewOf(user, user.role, csrf, expiresAt);
  }
}

/** What the dashboard is told of its session: who, where, and the token its changes carry. */
function viewOf(
  user: { id: number; email: string; first_name: string; last_name: string; organization_id: number; organization_name: string },
  role: Role,
  csrf: string,
  expiresAt: number,
): SessionView {
  return {
    user: { id: user.id, email: user.email, first_name: user.first_name, last_name: user.last_name, role_id: RoleIds[role], role },
    organization: { id: user.organization_id, name: user.organization_name },
    csrf_token: csrf,
    expires_at: expiresAt,
  };
}
