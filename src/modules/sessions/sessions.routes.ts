import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App, Deps } from '../../http/context.ts';
import { sessionCookie, sessionSecretOf } from '../../http/cookies.ts';
import { createLimit, limitReached } from '../../http/rate-limit.ts';
import { AppError } from '../../lib/errors.ts';
import { assertSameOrigin } from '../../http/same-origin.ts';
import { Link, LinkBody, ResetAccepted, ResetBody, Session, SignInBody, UseLinkBody } from './sessions.schemas.ts';
import type { NewSession } from './sessions.service.ts';

const tags = ['session'];
const TEN_MINUTES = 10 * 60_000;
const HOUR = 60 * 60_000;

/**
 * Signing in (docs/sign-in.md): the session of the web dashboard, and the invitation and reset links.
 * No token: these routes are how a person gets a session. Every other operation accepts the session's
 * cookie in place of a token (src/http/auth.ts).
 */
export default async function sessionsRoutes(app: App, { config, services }: Deps) {
  const sessions = services.sessions;
  const secure = config.publicUrl.startsWith('https:');
  const maxAge = config.sessions.sessionDays * 86_400;
  const attempts = config.limits.signInAttemptsPer10Minutes;
  const emailOf = (request: FastifyRequest) => {
    const email = (request.body as { email?: unknown } | undefined)?.email;
    return typeof email === 'string' ? email.trim().toLowerCase() : '';
  };
  // Sign-in attempts are counted per address (one machine guessing many accounts) and per account
  // (many machines guessing one), so that neither can guess at speed.
  const byAddress = createLimit(app, attempts * 3, TEN_MINUTES, (request) => `signin-ip:${request.ip}`);
  const byAccount = createLimit(app, attempts, TEN_MINUTES, (request) => `signin-account:${emailOf(request)}`);
  const resetsByAddress = createLimit(app, 10, HOUR, (request) => `reset-ip:${request.ip}`);
  const resetsByAccount = createLimit(app, 3, HOUR, (request) => `reset-account:${emailOf(request)}`);

  const started = (reply: FastifyReply, session: NewSession) =>
    reply
      .code(201)
      .header('set-cookie', sessionCookie(session.secret, maxAge, secure))
      .header('cache-control', 'no-store')
      .send(session.view);

  app.post(
    '/v1/session',
    {
      config: { public: true },
      schema: { tags, summary: 'Sign in with email and password: sets the session cookie', body: SignInBody, response: { 201: Session } },
    },
    async (req, reply) => {
      assertSameOrigin(req, config.publicUrl);
      // Every attempt counts before the password is checked: guesses sent all at once are limited too.
      for (const limit of [byAddress, byAccount]) {
        if (await limitReached(limit, req, reply)) throw new AppError('rate_limited', 'Too many sign-in attempts; try again later');
      }
      return started(reply, await sessions.signIn(req.body.email, req.body.password, req.body.organization_id));
    },
  );

  app.get(
    '/v1/session',
    { config: { public: true }, schema: { tags, summary: 'Who is signed in (by the session cookie)', response: { 200: Session } } },
    async (req, reply) => {
      const secret = sessionSecretOf(req, secure);
      if (!secret) throw new AppError('unauthorized', 'Not signed in');
      reply.header('cache-control', 'no-store');
      return sessions.current(secret);
    },
  );

  app.delete(
    '/v1/session',
    { config: { public: true }, schema: { tags, summary: 'Sign out: ends the session and removes its cookie' } },
    async (req, reply) => {
      assertSameOrigin(req, config.publicUrl);
      const secret = sessionSecretOf(req, secure);
      if (secret) await sessions.signOut(secret);
      return reply
        .code(204)
        .header('set-cookie', sessionCookie('', 0, secure))
        .send();
    },
  );

  app.post(
    '/v1/account_links/inspect',
    {
      config: { public: true },
      schema: { tags, summary: 'What a mailed invitation or reset link is for (404 once used or expired)', body: LinkBody, response: { 200: Link } },
    },
    async (req) => sessions.describeLink(req.body.token),
  );

  app.post(
    '/v1/account_links/use',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Use a mailed link: choose the password (and name) and sign in',
        body: UseLinkBody,
        response: { 201: Session },
      },
    },
    async (req, reply) => {
      assertSameOrigin(req, config.publicUrl);
      const { token, password, first_name, last_name } = req.body;
      return started(reply, await sessions.useLink(token, password, { first_name, last_name }));
    },
  );

  app.post(
    '/v1/password_resets',
    {
      config: { public: true },
      schema: {
        tags,
        summary: 'Mail a password reset link to the address (answered the same whether it has an account or not)',
        body: ResetBody,
        response: { 202: ResetAccepted },
      },
    },
    async (req, reply) => {
      assertSameOrigin(req, config.publicUrl);
      for (const limit of [resetsByAddress, resetsByAccount]) {
        if (await limitReached(limit, req, reply)) throw new AppError('rate_limited', 'Too many reset requests; try again later');
      }
      // Answered before anything is looked up: how long it takes tells nothing about the address.
      const email = req.body.email;
      setImmediate(() => void sessions.requestReset(email).catch((err: unknown) => req.log.error({ err }, 'password reset: could not queue the mail')));
      return reply.code(202).send({ status: 'accepted' as const });
    },
  );
}
