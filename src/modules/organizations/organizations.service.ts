import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.ts';
import { nowSeconds } from '../../lib/time.ts';
import { AppError } from '../../http/errors.ts';
import { TokensService } from '../tokens/tokens.service.ts';
import { OrganizationsRepository } from './organizations.repository.ts';

export class OrganizationsService {
  private readonly repo: OrganizationsRepository;
  private readonly tokens: TokensService;

  constructor(db: Kysely<DB>) {
    this.repo = new OrganizationsRepository(db);
    this.tokens = new TokensService(db);
  }

  /** Creates an organization and its first owner token (returned once, in clear). */
  async createWithOwner(name: string, parentId: number | null = null) {
    const trimmed = name.trim();
    if (!trimmed) throw new AppError('validation_failed', 'name must not be empty', [{ field: 'name', message: 'must not be empty' }]);
    if (parentId !== null && !(await this.repo.findById(parentId))) throw new AppError('not_found', `No organization ${parentId}`);
    const now = nowSeconds();
    const org = await this.repo.insert({ name: trimmed, parent_id: parentId, created_at: now, updated_at: now });
    const token = await this.tokens.issue(org.id, 'owner', 'owner');
    return { organization: org, token };
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
}
