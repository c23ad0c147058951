import type { Kysely, Updateable } from 'kysely';
import type { AccessManagersTable, DB } from '../../db/schema.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { nowSeconds } from '../../lib/time.ts';
import { type AccessManagersRepository, type AccessManagerRow } from './access-managers.repository.ts';
import { DOMAINS_MAX, type AccessManager, type AccessManagerListQuery, type UpdateAccessManagerBody } from './access-managers.schemas.ts';
import { parseStringList } from '../../lib/json-list.ts';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * A hostname as a domain whitelist entry: lower-cased, trailing dot dropped, at least two labels of
 * letters, digits and inner hyphens (IDNs in their xn-- form), a non-numeric top label (so that an IP
 * address is not taken for a domain). Null when it is not one.
 */
export function normaliseHostname(input: string): string | null {
  const host = input.trim().toLowerCase().replace(/\.$/, '');
  if (host.length === 0 || host.length > 253) return null;
  const labels = host.split('.');
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null;
  if (/^\d+$/.test(labels[labels.length - 1])) return null;
  return host;
}

export function toAccessManager(row: AccessManagerRow): AccessManager {
  return {
    id: row.id,
    player_id: row.player_id,
    player_uuid: row.player_uuid,
    moderator_id: row.live_moderator_id ?? null,
    enabled: Boolean(row.enabled),
    custom_sender_display_name: row.custom_sender_display_name,
    custom_approval_message: row.custom_approval_message,
    custom_denial_message: row.custom_denial_message,
    whitelisted_domains_enabled: Boolean(row.whitelisted_domains_enabled),
    whitelisted_domains: parseStringList(row.whitelisted_domains),
    max_access_code_uses: row.max_access_code_uses,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** An empty or blank custom text means "use the default": stored as null. */
const textOrNull = (value: string | null): string | null => (value === null || value.trim() === '' ? null : value.trim());

/** Player access managers: one per player, made on first sight, changed by admins. */
export class AccessManagersService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: AccessManagersRepository,
  ) {}

  async list(organizationId: number, query: AccessManagerListQuery, page: Page): Promise<Listing<AccessManager>> {
    await this.repo.ensureForOrganization(organizationId, nowSeconds());
    const [rows, total] = await Promise.all([
      this.repo.list(organizationId, { limit: page.limit, offset: page.offset, playerId: query.player_id }),
      page.paged ? this.repo.count(organizationId, query.player_id) : Promise.resolve(null),
    ]);
    const items = rows.map(toAccessManager);
    return { items, total: total ?? items.length };
  }

  async get(organizationId: number, id: number): Promise<AccessManager> {
    const row = await this.repo.find(organizationId, id);
    if (!row) throw notFound('access manager', id);
    return toAccessManager(row);
  }

  async update(organizationId: number, id: number, body: UpdateAccessManagerBody): Promise<AccessManager> {
    const changes: Updateable<AccessManagersTable> = {};
    if (body.enabled !== undefined) changes.enabled = body.enabled;
    if (body.whitelisted_domains_enabled !== undefined) changes.whitelisted_domains_enabled = body.whitelisted_domains_enabled;
    if (body.max_access_code_uses !== undefined) changes.max_access_code_uses = body.max_access_code_uses;
    if (body.custom_sender_display_name !== undefined) changes.custom_sender_display_name = textOrNull(body.custom_sender_display_name);
    if (body.custom_approval_message !== undefined) changes.custom_approval_message = textOrNull(body.custom_approval_message);
    if (body.custom_denial_message !== undefined) changes.custom_denial_message = textOrNull(body.custom_denial_message);
    if (body.whitelisted_domains !== undefined) {
      const given = Array.isArray(body.whitelisted_domains) ? body.whitelisted_domains : body.whitelisted_domains.split(',').filter((d) => d.trim() !== '');
      if (given.length > DOMAINS_MAX) throw invalidField('whitelisted_domains', `must have at most ${DOMAINS_MAX} domains`);
      const domains: string[] = [];
      given.forEach((d, i) => {
        const host = normaliseHostname(d);
        if (host === null)
          throw invalidField(
            Array.isArray(body.whitelisted_domains) ? `whitelisted_domains.${i}` : 'whitelisted_domains',
            `${JSON.stringify(d)} is not a hostname`,
          );
        if (!domains.includes(host)) domains.push(host);
      });
      changes.whitelisted_domains = JSON.stringify(domains);
    }
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const existing = await repo.find(organizationId, id);
      if (!existing) throw notFound('access manager', id);
      if (body.moderator_id !== undefined && body.moderator_id !== null && !(await repo.userExists(organizationId, body.moderator_id))) {
        throw invalidField('moderator_id', 'does not name a user of this organization');
      }
      if (body.moderator_id !== undefined) changes.moderator_id = body.moderator_id;
      if (Object.keys(changes).length === 0) return toAccessManager(existing);
      await repo.update(organizationId, id, { ...changes, updated_at: nowSeconds() });
      return toAccessManager((await repo.find(organizationId, id))!);
    });
  }
}
