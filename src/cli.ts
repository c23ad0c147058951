import { Command, CommanderError } from 'commander';
import { loadConfig } from './config.ts';
import { openAndMigrate } from './runtime.ts';
import { isRole, Roles } from './modules/roles/permissions.ts';
import { OrganizationsService } from './modules/organizations/organizations.service.ts';
import { TokensService } from './modules/tokens/tokens.service.ts';
import type { Database } from './db/database.ts';

/** Admin CLI. The last line of stdout is always one JSON object, so scripts can `tail -n 1`. */
const out = (value: object) => process.stdout.write(`${JSON.stringify(value)}\n`);

async function withDatabase<T>(fn: (database: Database) => Promise<T>): Promise<T> {
  const database = await openAndMigrate(loadConfig());
  try {
    return await fn(database);
  } finally {
    await database.destroy();
  }
}

const program = new Command('reelbase')
  .description('Reelbase admin CLI (honours DATA_DIR and DATABASE_URL)')
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

program
  .command('migrate')
  .description('apply database migrations')
  .action(() =>
    withDatabase(async () => {
      out({ migrated: true });
    }),
  );

const org = program.command('org').description('organizations');
org
  .command('create')
  .description('create an organization and print an owner token')
  .requiredOption('--name <name>', 'organization name')
  .option('--parent <id>', 'parent organization id')
  .action((opts: { name: string; parent?: string }) =>
    withDatabase(async ({ db }) => {
      const parent = opts.parent === undefined ? null : Number.parseInt(opts.parent, 10);
      if (parent !== null && !Number.isInteger(parent)) throw new Error('--parent must be an integer');
      const { organization, token } = await new OrganizationsService(db).createWithOwner(opts.name, parent);
      out({ organization_id: organization.id, auth_token: token });
    }),
  );

const token = program.command('token').description('API tokens');
token
  .command('create')
  .description('create an API token for an organization')
  .requiredOption('--org <id>', 'organization id')
  .requiredOption('--role <role>', `one of ${Roles.join('|')}`)
  .action((opts: { org: string; role: string }) =>
    withDatabase(async ({ db }) => {
      const orgId = Number.parseInt(opts.org, 10);
      if (!Number.isInteger(orgId)) throw new Error('--org must be an integer');
      if (!isRole(opts.role)) throw new Error(`--role must be one of ${Roles.join(', ')}`);
      if (!(await new OrganizationsService(db).findById(orgId))) throw new Error(`no organization ${orgId}`);
      out({ auth_token: await new TokensService(db).issue(orgId, opts.role, opts.role) });
    }),
  );

program
  .parseAsync(process.argv)
  .then(() => {
    if (process.argv.length <= 2) {
      program.outputHelp();
      out({ commands: program.commands.map((c) => c.name()) });
    }
  })
  .catch((err: unknown) => {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.help' || err.code === 'commander.version') {
        out({ help: true });
        process.exit(0);
      }
      out({ error: err.message });
      process.exit(2);
    }
    const message = err instanceof Error ? err.message : String(err);
    out({ error: message });
    process.exit(1);
  });
