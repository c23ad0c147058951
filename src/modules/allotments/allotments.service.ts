import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { lockOrganization } from '../../db/dialect.ts';
import { AppError, invalidField, notFound } from '../../lib/errors.ts';
import { nowSeconds } from '../../lib/time.ts';
import { type AllotmentsRepository, type EmbedsRepository, type LimitRow } from './allotments.repository.ts';
import {
  AllotmentTypes,
  DefaultAllotmentTypes,
  type AllotmentLimitInput,
  type AllotmentLimitsInput,
  type AllotmentType,
  type AllotmentUsage,
  type AllotmentsResponse,
} from './allotments.schemas.ts';

export const isAllotmentType = (value: unknown): value is AllotmentType => typeof value === 'string' && (AllotmentTypes as readonly string[]).includes(value);

/** No limit row: limit 0, grace 0, not enforced, i.e. unlimited. */
const NO_LIMIT = { limit: 0, grace_limit: 0, enforced: false };

function limitsOf(row: LimitRow | undefined) {
  return row ? { limit: Number(row.limit), grace_limit: Number(row.grace_limit), enforced: Boolean(row.enforced) } : { ...NO_LIMIT };
}

const labels: Record<AllotmentType, string> = { govideo_users: 'users', teams: 'teams', embeds: 'embeds' };

export class AllotmentsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: AllotmentsRepository,
    private readonly embeds: EmbedsRepository,
  ) {}

  /**
   * Checks, inside the creating transaction, that one more `type` fits the organization's allotment:
   * the organization is locked first (PostgreSQL) so that concurrent creations cannot both pass the
   * check. When the allotment is enforced and current_usage + 1 would pass limit + grace_limit, throws
   * 403 allotment_exceeded.
   */
  async reserve(trx: Kysely<DB>, organizationId: number, type: AllotmentType): Promise<void> {
    await lockOrganization(trx, organizationId);
    const repo = this.repo.with(trx);
    const limits = limitsOf(await repo.limit(organizationId, type));
    if (!limits.enforced) return;
    const usage = await repo.usage(organizationId, type);
    const ceiling = limits.limit + limits.grace_limit;
    if (usage + 1 > ceiling) {
      throw new AppError(
        'allotment_exceeded',
        `The ${type} allotment is used up: ${usage} ${labels[type]} of ${ceiling} allowed (limit ${limits.limit} + grace ${limits.grace_limit})`,
      );
    }
  }

  /** Writes allotment limits (fields not given keep their value, or the default). */
  async writeLimits(trx: Kysely<DB>, organizationId: number, input: AllotmentLimitsInput): Promise<void> {
    const repo = this.repo.with(trx);
    for (const type of AllotmentTypes) {
      const change: AllotmentLimitInput | undefined = input[type];
      if (!change) continue;
      const current = limitsOf(await repo.limit(organizationId, type));
      await repo.upsert(organizationId, type, {
        limit: change.limit ?? current.limit,
        grace_limit: change.grace_limit ?? current.grace_limit,
        enforced: change.enforced ?? current.enforced,
      });
    }
  }

  /** `types` as sent (validated here so that an unknown one is named); default govideo_users and teams. */
  static parseTypes(types: string[] | undefined): AllotmentType[] {
    const given = (types ?? []).map((t) => t.trim()).filter(Boolean);
    if (given.length === 0) return [...DefaultAllotmentTypes];
    const unknown = given.filter((t) => !isAllotmentType(t));
    if (unknown.length > 0) {
      throw invalidField('types', `contains unknown type ${unknown.map((t) => JSON.stringify(t)).join(', ')}; allowed: ${AllotmentTypes.join(', ')}`);
    }
    return AllotmentTypes.filter((t) => given.includes(t));
  }

  async one(organizationId: number, type: AllotmentType, db: Kysely<DB> = this.db): Promise<AllotmentUsage> {
    const repo = this.repo.with(db);
    const [row, usage] = await Promise.all([repo.limit(organizationId, type), repo.usage(organizationId, type)]);
    return { current_usage: usage, ...limitsOf(row) };
  }

  /** The organization's allotments (the caller has checked that the organization may be seen). */
  async usage(organizationId: number, types: string[] | undefined): Promise<AllotmentsResponse> {
    const selected = AllotmentsService.parseTypes(types);
    const out: AllotmentsResponse = {};
    for (const type of selected) out[type] = await this.one(organizationId, type);
    return out;
  }

  /** Sets one allotment's limits of an existing organization; answers the resulting usage. */
  async setLimits(organizationId: number, type: AllotmentType, change: AllotmentLimitInput): Promise<AllotmentUsage> {
    return this.db.transaction().execute(async (trx) => {
      await this.writeLimits(trx, organizationId, { [type]: change });
      return this.one(organizationId, type, trx);
    });
  }

  /** Whether a player may be embedded (what the two operations below set). */
  async embedOf(organizationId: number, uuid: string): Promise<{ embed_enabled: boolean }> {
    const player = await this.embeds.findPlayer(organizationId, uuid);
    if (!player) throw notFound('player');
    return { embed_enabled: Boolean(player.embed_enabled) };
  }

  /**
   * Enables or disables embedding of a player (players.embed_enabled). Enabling counts one more
   * against the embeds allotment; doing what is already done changes nothing.
   */
  async setEmbed(organizationId: number, uuid: string, enabled: boolean): Promise<{ success: true; embed_enabled: boolean }> {
    return this.db.transaction().execute(async (trx) => {
      if (enabled) await lockOrganization(trx, organizationId);
      const players = this.embeds.with(trx);
      const player = await players.findPlayer(organizationId, uuid);
      if (!player) throw notFound('player');
      if (Boolean(player.embed_enabled) !== enabled) {
        if (enabled) await this.reserve(trx, organizationId, 'embeds');
        await players.setEmbedEnabled(organizationId, player.id, enabled, nowSeconds());
      }
      return { success: true as const, embed_enabled: enabled };
    });
  }
}
