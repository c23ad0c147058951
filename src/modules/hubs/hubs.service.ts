import type { Kysely } from 'kysely';
import { isUniqueViolation, lockOrganization } from '../../db/dialect.ts';
import type { DB } from '../../db/schema.ts';
import { invalidField, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import { nowSeconds } from '../../lib/time.ts';
import type { CategoryRow, HubRow, HubsRepository, HubWithCountRow } from './hubs.repository.ts';
import {
  HUB_NAME_MAX,
  SLUG_MAX,
  type Category,
  type CreateCategoryBody,
  type CreateHubBody,
  type Hub,
  type UpdateCategoryBody,
  type UpdateHubBody,
} from './hubs.schemas.ts';

/**
 * A slug made from a name: lower-case, accents stripped (NFKD), every run of other characters one
 * dash, no leading or trailing dash, at most 100 characters. Empty when the name has no letter or
 * digit it can keep (the caller then falls back to a default).
 */
export function slugify(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
}

/** The n-th candidate for a derived slug: `base`, then `base-2`, `base-3`, … (the base shortened to fit 100). */
function candidate(base: string, n: number): string {
  if (n === 1) return base;
  const suffix = `-${n}`;
  return `${base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '')}${suffix}`;
}

/** Trimmed, non-empty, at most 255 characters. */
function cleanName(raw: string, field = 'name'): string {
  const name = raw.trim();
  if (!name) throw invalidField(field, 'must not be blank');
  if (name.length > HUB_NAME_MAX) throw invalidField(field, `must be at most ${HUB_NAME_MAX} characters`);
  return name;
}

const slugTaken = () => invalidField('slug', 'has already been taken');

/** A unique violation lost to a concurrent writer is the same 422 as a slug found taken beforehand. */
async function slugRace<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (isUniqueViolation(error)) throw slugTaken();
    throw error;
  }
}

/** Moves `item` to `position` (clamped) in an ordered list; the end when no position is given. */
function placeAt<T>(list: T[], item: T, position: number | undefined): T[] {
  const rest = list.filter((x) => x !== item);
  const at = position === undefined ? rest.length : Math.min(Math.max(position, 0), rest.length);
  return [...rest.slice(0, at), item, ...rest.slice(at)];
}

export interface CategoryWithPlayers extends CategoryRow {
  player_ids: number[];
}

export class HubsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: HubsRepository,
    private readonly publicUrl: string,
  ) {}

  private hubUrl(slug: string): string {
    return `${this.publicUrl}/hubs/${slug}`;
  }

  private toHub(row: HubWithCountRow): Hub {
    return {
      id: row.id,
      name: row.name,
      slug: row.slug,
      description: row.description,
      public: Boolean(row.public),
      url: this.hubUrl(row.slug),
      category_count: Number(row.category_count ?? 0),
      created_at: Number(row.created_at),
      updated_at: Number(row.updated_at),
    };
  }

  private async require(organizationId: number, id: number, repo = this.repo): Promise<HubWithCountRow> {
    const row = await repo.find(organizationId, id);
    if (!row) throw notFound('hub', id);
    return row;
  }

  /** A free server-wide slug derived from the name: the slug itself, else -2, -3, … */
  private async derivedHubSlug(name: string): Promise<string> {
    const base = slugify(name) || 'hub';
    const taken = new Set(await this.repo.hubSlugsLike(base));
    for (let n = 1; ; n++) {
      const slug = candidate(base, n);
      // A shortened base is outside the set read above: ask for it.
      const isTaken = slug.startsWith(`${base}`) ? taken.has(slug) : await this.repo.hubSlugTaken(slug);
      if (!isTaken) return slug;
    }
  }

  /** Ordered by id. */
  async list(organizationId: number, page: Page): Promise<Listing<Hub>> {
    const rows = await this.repo.list(organizationId, { limit: page.limit, offset: page.offset });
    const items = rows.map((r) => this.toHub(r));
    const total = page.paged ? await this.repo.count(organizationId) : items.length;
    return { items, total };
  }

  async get(organizationId: number, id: number): Promise<Hub> {
    return this.toHub(await this.require(organizationId, id));
  }

  /** Creates a hub; a slug given and taken anywhere on the server is a 422, a derived one gets a suffix. */
  async create(organizationId: number, body: CreateHubBody): Promise<Hub> {
    const name = cleanName(body.name);
    let slug: string;
    if (body.slug !== undefined) {
      if (await this.repo.hubSlugTaken(body.slug)) throw slugTaken();
      slug = body.slug;
    } else {
      slug = await this.derivedHubSlug(name);
    }
    const now = nowSeconds();
    const row = await slugRace(() =>
      this.repo.insertHub({
        organization_id: organizationId,
        name,
        slug,
        description: body.description ?? null,
        public: body.public ?? true,
        created_at: now,
        updated_at: now,
      }),
    );
    return this.toHub({ ...row, category_count: 0 });
  }

  /** Changes the fields given; a new name keeps the slug (the public address stays) unless a slug is given too. */
  async update(organizationId: number, id: number, body: UpdateHubBody): Promise<Hub> {
    const current = await this.require(organizationId, id);
    const patch: { name?: string; slug?: string; description?: string | null; public?: boolean; updated_at: number } = { updated_at: nowSeconds() };
    if (body.name !== undefined) patch.name = cleanName(body.name);
    if (body.slug !== undefined && body.slug !== current.slug) {
      if (await this.repo.hubSlugTaken(body.slug, id)) throw slugTaken();
      patch.slug = body.slug;
    }
    if (body.description !== undefined) patch.description = body.description;
    if (body.public !== undefined) patch.public = body.public;
    await slugRace(() => this.repo.updateHub(organizationId, id, patch));
    return this.get(organizationId, id);
  }

  /** Deletes the hub with its categories; answers the hub as it was. */
  async delete(organizationId: number, id: number): Promise<Hub> {
    const hub = this.toHub(await this.require(organizationId, id));
    await this.repo.deleteHub(organizationId, id);
    return hub;
  }

  async sitemap(organizationId: number, id: number): Promise<{ url: string }> {
    const hub = await this.require(organizationId, id);
    return { url: `${this.hubUrl(hub.slug)}/sitemap.xml` };
  }

  // ---- categories --------------------------------------------------------------------------------

  private async toCategories(rows: CategoryRow[], repo = this.repo): Promise<Category[]> {
    const players = await repo.playerIdsOf(rows.map((r) => r.id));
    return rows.map((r) => ({
      id: r.id,
      hub_id: r.hub_id,
      name: r.name,
      slug: r.slug,
      position: r.position,
      player_ids: players.get(r.id) ?? [],
      created_at: Number(r.created_at),
      updated_at: Number(r.updated_at),
    }));
  }

  /** Unknown ids and another organization's players are a 422 naming `player_ids`; duplicates are dropped, order kept. */
  private async checkPlayers(repo: HubsRepository, organizationId: number, ids: number[]): Promise<number[]> {
    const unique = [...new Set(ids)];
    const found = await repo.existingPlayerIds(organizationId, unique);
    const missing = unique.filter((id) => !found.has(id));
    if (missing.length > 0) throw invalidField('player_ids', `contains ids of no player: ${missing.slice(0, 20).join(', ')}`);
    return unique;
  }

  /** Positions become 0..n-1 in the given order; only the rows that move are written. */
  private async renumber(repo: HubsRepository, organizationId: number, ordered: CategoryRow[], now: number, touched?: number): Promise<void> {
    for (const [position, row] of ordered.entries()) {
      if (row.position !== position) await repo.updateCategory(organizationId, row.id, { position, ...(row.id === touched ? {} : { updated_at: now }) });
    }
  }

  /** In position order. */
  async listCategories(organizationId: number, hubId: number, page: Page): Promise<Listing<Category>> {
    await this.require(organizationId, hubId);
    const rows = await this.repo.categories(organizationId, hubId, { limit: page.limit, offset: page.offset });
    const items = await this.toCategories(rows);
    const total = page.paged ? await this.repo.countCategories(organizationId, hubId) : items.length;
    return { items, total };
  }

  /** Inserts a category at `position` (clamped; the end by default), moving the later ones down. */
  async createCategory(organizationId: number, hubId: number, body: CreateCategoryBody): Promise<Category> {
    const name = cleanName(body.name);
    const row = await slugRace(() =>
      this.db.transaction().execute(async (trx) => {
        await lockOrganization(trx, organizationId);
        const repo = this.repo.with(trx);
        await this.require(organizationId, hubId, repo);
        const siblings = await repo.categories(organizationId, hubId);
        const taken = new Set(siblings.map((c) => c.slug));
        let slug: string;
        if (body.slug !== undefined) {
          if (taken.has(body.slug)) throw slugTaken();
          slug = body.slug;
        } else {
          const base = slugify(name) || 'category';
          let n = 1;
          while (taken.has(candidate(base, n))) n++;
          slug = candidate(base, n);
        }
        const playerIds = await this.checkPlayers(repo, organizationId, body.player_ids ?? []);
        const now = nowSeconds();
        const at = Math.min(body.position ?? siblings.length, siblings.length);
        const inserted = await repo.insertCategory({
          organization_id: organizationId,
          hub_id: hubId,
          name,
          slug,
          position: at,
          created_at: now,
          updated_at: now,
        });
        await this.renumber(repo, organizationId, placeAt([...siblings, inserted], inserted, at), now, inserted.id);
        await repo.setPlayers(inserted.id, playerIds);
        return repo.findCategory(organizationId, hubId, inserted.id);
      }),
    );
    return (await this.toCategories([row!]))[0];
  }

  /** Changes the fields given; `position` moves the category (clamped), `player_ids` replaces its players. */
  async updateCategory(organizationId: number, hubId: number, id: number, body: UpdateCategoryBody): Promise<Category> {
    const name = body.name !== undefined ? cleanName(body.name) : undefined;
    const row = await slugRace(() =>
      this.db.transaction().execute(async (trx) => {
        await lockOrganization(trx, organizationId);
        const repo = this.repo.with(trx);
        await this.require(organizationId, hubId, repo);
        const siblings = await repo.categories(organizationId, hubId);
        const current = siblings.find((c) => c.id === id);
        if (!current) throw notFound('category', id);
        const now = nowSeconds();
        const patch: { name?: string; slug?: string; updated_at: number } = { updated_at: now };
        if (name !== undefined) patch.name = name;
        if (body.slug !== undefined && body.slug !== current.slug) {
          if (siblings.some((c) => c.slug === body.slug)) throw slugTaken();
          patch.slug = body.slug;
        }
        if (body.player_ids !== undefined) await repo.setPlayers(id, await this.checkPlayers(repo, organizationId, body.player_ids));
        await repo.updateCategory(organizationId, id, patch);
        if (body.position !== undefined) await this.renumber(repo, organizationId, placeAt(siblings, current, body.position), now, id);
        return repo.findCategory(organizationId, hubId, id);
      }),
    );
    return (await this.toCategories([row!]))[0];
  }

  /** Deletes a category; the later ones move up. Answers the category as it was. */
  async deleteCategory(organizationId: number, hubId: number, id: number): Promise<Category> {
    return this.db.transaction().execute(async (trx) => {
      await lockOrganization(trx, organizationId);
      const repo = this.repo.with(trx);
      await this.require(organizationId, hubId, repo);
      const siblings = await repo.categories(organizationId, hubId);
      const current = siblings.find((c) => c.id === id);
      if (!current) throw notFound('category', id);
      const [answer] = await this.toCategories([current], repo);
      await repo.deleteCategory(organizationId, id);
      await this.renumber(
        repo,
        organizationId,
        siblings.filter((c) => c.id !== id),
        nowSeconds(),
      );
      return answer;
    });
  }

  // ---- for the public pages ------------------------------------------------------------------------

  /** A public hub by its slug (any organization); undefined when there is none or it is not public. */
  findPublicBySlug(slug: string): Promise<HubRow | undefined> {
    return this.repo.findPublicBySlug(slug);
  }

  /** The hub's categories in position order, each with its player ids in order. */
  async categoriesWithPlayers(hubId: number): Promise<CategoryWithPlayers[]> {
    const rows = await this.repo.categoriesOfHub(hubId);
    const players = await this.repo.playerIdsOf(rows.map((r) => r.id));
    return rows.map((r) => ({ ...r, player_ids: players.get(r.id) ?? [] }));
  }
}
