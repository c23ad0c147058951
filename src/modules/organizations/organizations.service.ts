import type { Kysely, Updateable } from 'kysely';
import type { DB, OrganizationsTable } from '../../db/schema.ts';
import { nowSeconds } from '../../lib/time.ts';
import { AppError, notFound } from '../../lib/errors.ts';
import type { Listing, Page } from '../../lib/paging.ts';
import type { TokensService } from '../tokens/tokens.service.ts';
import { AllotmentsService } from '../allotments/allotments.service.ts';
import type { AllotmentLimitInput, AllotmentsResponse, AllotmentType, AllotmentUsage } from '../allotments/allotments.schemas.ts';
import type { TeamsRepository } from '../teams/teams.repository.ts';
import { type OrganizationsRepository, type OrganizationRow } from './organizations.repository.ts';
import type { FamilyNode, Organization, UpdateOrganizationBody } from './organizations.schemas.ts';

/** The name of the admin team every organization is created with. */
export const ADMIN_TEAM_NAME = 'Administrators';

/** Installation-wide domains answered for an organization that has not set its own. */
export interface DomainDefaults {
  embedDomain: string;
  playbackDomain: string;
}

export class OrganizationsService {
  constructor(
    private readonly db: Kysely<DB>,
    private readonly repo: OrganizationsRepository,
    private readonly teams: TeamsRepository,
    private readonly tokens: TokensService,
    private readonly allotmentsOf: AllotmentsService,
    private readonly defaults: DomainDefaults | null = null,
  ) {}

  toWire(row: OrganizationRow): Organization {
    return {
      id: row.id,
      name: row.name,
      parent_id: row.parent_id,
      account_id: row.account_id ?? row.id,
      embed_domain: row.embed_domain ?? this.defaults?.embedDomain ?? null,
      secure_embed_domain: row.secure_embed_domain ?? this.defaults?.embedDomain ?? null,
      playback_domain: row.playback_domain ?? this.defaults?.playbackDomain ?? null,
      created_at: Number(row.created_at),
      updated_at: Number(row.updated_at),
    };
  }

  /**
   * Creates an organization, its admin team and its first owner token (returned once, in clear), in
   * one transaction. A child organization belongs to its parent's account (account_id = family root).
   */
  async createWithOwner(name: string, parentId: number | null = null) {
    const trimmed = name.trim();
    if (!trimmed) throw new AppError('validation_failed', 'name must not be empty', [{ field: 'name', message: 'must not be empty' }]);
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      const parent = parentId === null ? null : await repo.findById(parentId);
      if (parentId !== null && !parent) throw new AppError('not_found', `No organization ${parentId}`);
      const now = nowSeconds();
      const inserted = await repo.insert({ name: trimmed, parent_id: parentId, created_at: now, updated_at: now });
      const accountId = parent ? (parent.account_id ?? parent.id) : inserted.id;
      const org = (await repo.update(inserted.id, { account_id: accountId })) ?? inserted;
      await this.teams.with(trx).insert({ organization_id: org.id, name: ADMIN_TEAM_NAME, is_admin: true, created_at: now, updated_at: now });
      const token = await this.tokens.issue(org.id, 'owner', 'owner', null, trx);
      return { organization: org, token };
    });
  }

  /** First start: an empty database gets organization "Default" and an owner token. */
  async bootstrapIfEmpty(): Promise<{ organizationId: number; token: string } | null> {
    if ((await this.repo.count()) > 0) return null;
    const { organization, token } = await this.createWithOwner('Default');
    return { organizationId: organization.id, token };
  }

  findById(id: number) {
    return this.repo.findById(id);
  }

  /** An organization the token may see: its own or a descendant; any other is answered as missing. */
  private async visible(tokenOrganizationId: number, id: number, repo = this.repo): Promise<OrganizationRow> {
    const row = (await repo.isVisible(tokenOrganizationId, id)) ? await repo.findById(id) : undefined;
    if (!row) throw notFound('organization', id);
    return row;
  }

  /** An organization's allotments: the token's organization or one of its descendants, else 404. */
  async allotments(tokenOrganizationId: number, id: number, types: string[] | undefined): Promise<AllotmentsResponse> {
    const selected = AllotmentsService.parseTypes(types);
    await this.visible(tokenOrganizationId, id);
    return this.allotmentsOf.usage(id, selected);
  }

  /** Sets one allotment's limits (admin CLI); answers the resulting usage. */
  async setAllotmentLimits(id: number, type: AllotmentType, change: AllotmentLimitInput): Promise<AllotmentUsage> {
    if (!(await this.repo.findById(id))) throw notFound('organization', id);
    return this.allotmentsOf.setLimits(id, type, change);
  }

  async get(tokenOrganizationId: number, id: number): Promise<Organization> {
    return this.toWire(await this.visible(tokenOrganizationId, id));
  }

  /** Everything the token may see, by id. */
  async list(tokenOrganizationId: number, page: Page): Promise<Listing<Organization>> {
    const [rows, total] = await Promise.all([
      this.repo.listSubtree(tokenOrganizationId, { limit: page.limit, offset: page.offset }),
      page.paged ? this.repo.countSubtree(tokenOrganizationId) : Promise.resolve(null),
    ]);
    const items = rows.map((r) => this.toWire(r));
    return { items, total: total ?? items.length };
  }

  /** Updates name, domains and allotment limits in one transaction. */
  async update(tokenOrganizationId: number, id: number, body: UpdateOrganizationBody): Promise<Organization> {
    return this.db.transaction().execute(async (trx) => {
      const repo = this.repo.with(trx);
      let row = await this.visible(tokenOrganizationId, id, repo);
      const values: Updateable<OrganizationsTable> = {};
      if (body.name !== undefined) {
        const name = body.name.trim();
        if (!name) throw new AppError('validation_failed', 'name must not be blank', [{ field: 'name', message: 'must not be blank' }]);
        values.name = name;
      }
      for (const key of ['embed_domain', 'secure_embed_domain', 'playback_domain'] as const) {
        const value = body[key];
        if (value !== undefined) values[key] = value === null ? null : value.toLowerCase();
      }
      if (body.allotments) {
        // A family hands allotments down: a child's are set by an ancestor, not by the child itself.
        if (row.parent_id !== null && id === tokenOrganizationId) {
          throw new AppError('forbidden', "A child organization's allotments are set by its parent organization");
        }
        await this.allotmentsOf.writeLimits(trx, id, body.allotments);
      }
      if (Object.keys(values).length > 0) {
        row = (await repo.update(id, { ...values, updated_at: nowSeconds() })) ?? row;
      }
      return this.toWire(row);
    });
  }

  /**
   * The family tree around `id`, as far as the token may see it: rooted at the token's organization
   * (a child's token sees neither its parent nor its siblings), children by id.
   */
  async family(tokenOrganizationId: number, id: number): Promise<FamilyNode> {
    await this.visible(tokenOrganizationId, id);
    const rows = await this.repo.listSubtree(tokenOrganizationId);
    const nodes = new Map<number, FamilyNode>(rows.map((r) => [r.id, { id: r.id, name: r.name, parent_id: r.parent_id, children: [] }]));
    for (const r of rows) {
      if (r.id === tokenOrganizationId || r.parent_id === null) continue;
      nodes.get(r.parent_id)?.children.push(nodes.get(r.id)!);
    }
    return nodes.get(tokenOrganizationId)!;
  }
}
