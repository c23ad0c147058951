import { sql, type Kysely } from 'kysely';

/**
 * Accounts, part two: organization families (account_id = the family's root), one admin team per
 * organization enforced by the database, case-insensitive team names.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('organizations_parent_idx').on('organizations').column('parent_id').execute();

  // account_id is the id of the family's root organization.
  const orgs = await db.selectFrom('organizations').select(['id', 'parent_id', 'account_id']).execute();
  const parentOf = new Map<number, number | null>(orgs.map((o: any) => [Number(o.id), o.parent_id === null ? null : Number(o.parent_id)]));
  const rootOf = (id: number) => {
    const seen = new Set<number>();
    let current = id;
    for (;;) {
      const parent = parentOf.get(current) ?? null;
      if (parent === null || seen.has(parent) || !parentOf.has(parent)) return current;
      seen.add(current);
      current = parent;
    }
  };
  for (const o of orgs as Array<{ id: number; account_id: number | null }>) {
    if (o.account_id === null)
      await db
        .updateTable('organizations')
        .set({ account_id: rootOf(Number(o.id)) })
        .where('id', '=', o.id)
        .execute();
  }

  // Organizations created after 0004 by an older build have no admin team yet.
  await sql`insert into teams (organization_id, name, is_admin, created_at, updated_at)
            select o.id, 'Administrators', ${true}, o.created_at, o.created_at from organizations o
            where not exists (select 1 from teams t where t.organization_id = o.id and t.is_admin = ${true})`.execute(db);

  // At most one admin team per organization, and team names unique regardless of case.
  await sql`create unique index teams_one_admin_idx on teams (organization_id) where is_admin`.execute(db);
  await sql`create unique index teams_org_lower_name_idx on teams (organization_id, lower(name))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index teams_org_lower_name_idx`.execute(db);
  await sql`drop index teams_one_admin_idx`.execute(db);
  await db.schema.dropIndex('organizations_parent_idx').execute();
}
