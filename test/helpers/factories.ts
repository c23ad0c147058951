import type { Role } from '../../src/modules/roles/permissions.ts';
import { client, type Client, type TestApp } from './harness.ts';

let counter = 0;
export const unique = (prefix: string) => `${prefix} ${++counter}-${Math.random().toString(36).slice(2, 8)}`;

export interface OrgContext {
  organizationId: number;
  token: string;
  /** Client acting with the owner token. */
  api: Client;
  /** A client for the same organization with another role. */
  as(role: Role): Promise<Client>;
}

/** A new organization with an owner token; the setup step of most tests. */
export async function createOrg(t: TestApp, name = unique('Org'), parentId: number | null = null): Promise<OrgContext> {
  const { organization, token } = await t.services.organizations.createWithOwner(name, parentId);
  return {
    organizationId: organization.id,
    token,
    api: client(t.app, token),
    async as(role: Role) {
      return client(t.app, await t.services.tokens.issue(organization.id, role));
    },
  };
}

/** A player with `chapters` chapters, created through the API; answers the Player resource. */
export async function createPlayer(api: Client, overrides: Record<string, unknown> = {}, chapters = 1) {
  const res = await api.post('/dashboard/v1/players', {
    player: {
      name: unique('Player'),
      chapters_attributes: Array.from({ length: chapters }, (_, i) => ({
        position: i,
        video_attributes: { name: unique('Video'), upload_url: `https://media.example.com/v${i}.mp4` },
      })),
      ...overrides,
    },
  });
  if (res.status !== 201) throw new Error(`createPlayer failed: ${res.status} ${res.raw}`);
  return res.body;
}

/** An email gate (a `simple_email` event that cannot be skipped) on a chapter, opening at `second`; answers the API's response. */
export function createEmailGate(api: Client, chapterId: number, second: number) {
  return api.post('/dashboard/v1/events', {
    event_type: 'simple_email',
    chapter_id: chapterId,
    second,
    closeable: false,
    html: '<form data-reelbase-event="email_gate"><input type="email" name="email" aria-label="Email"><button type="submit">Watch</button></form>',
  });
}

/** A CTA (a link shown from second 1 to 6) on a chapter; answers the API's response. */
export function createCta(api: Client, chapterId: number) {
  return api.post('/dashboard/v1/ctas', { chapter_id: chapterId, second: 1, duration: 5, width: 200, html: '<a href="https://example.com">Go</a>' });
}

/** A user invited through the API (POST /v1/users); answers the User resource. */
export async function createUser(api: Client, overrides: Record<string, unknown> = {}) {
  const res = await api.post('/dashboard/v1/users', {
    email: `${unique('user').replace(/\W+/g, '.')}@example.com`,
    first_name: 'Test',
    last_name: 'User',
    role_id: 4,
    ...overrides,
  });
  if (res.status !== 201) throw new Error(`createUser failed: ${res.status} ${res.raw}`);
  return res.body;
}

/** A client whose token acts as the user `userId` (follows the user's role; stops when the user is removed). */
export async function userClient(t: TestApp, organizationId: number, userId: number, role: Role): Promise<Client> {
  return client(t.app, await t.services.tokens.issue(organizationId, role, `user ${userId}`, userId));
}

/** A desktop browser's user agent: what a viewer's reports carry (a test client's own is taken for a bot). */
export const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
