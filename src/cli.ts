import { Command, CommanderError } from 'commander';
import path from 'node:path';
import { uploadFile } from './cli-upload.ts';
import { loadConfig } from './config.ts';
import { openAndMigrate } from './runtime.ts';
import { createContainer, type Services } from './container.ts';
import { AppError } from './lib/errors.ts';
import { isRole, Roles } from './modules/roles/permissions.ts';
import { isAllotmentType } from './modules/allotments/allotments.service.ts';
import { AllotmentTypes, MAX_LIMIT } from './modules/allotments/allotments.schemas.ts';

/** Admin CLI. The last line of stdout is always one JSON object, so scripts can `tail -n 1`. */
const out = (value: object) => process.stdout.write(`${JSON.stringify(value)}\n`);

/** A positive integer id given on the command line. */
function parseId(value: string, flag: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2147483647) throw new Error(`${flag} must be a positive integer`);
  return Number(value);
}

async function withServices<T>(fn: (services: Services) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = await openAndMigrate(config);
  const container = createContainer({ config, database });
  try {
    return await fn(container.services);
  } finally {
    await container.mailer.close();
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
    withServices(async () => {
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
    withServices(async ({ organizations }) => {
      const parent = opts.parent === undefined ? null : Number.parseInt(opts.parent, 10);
      if (parent !== null && !Number.isInteger(parent)) throw new Error('--parent must be an integer');
      const { organization, token } = await organizations.createWithOwner(opts.name, parent);
      out({ organization_id: organization.id, auth_token: token });
    }),
  );

org
  .command('limits')
  .description('set an allotment limit of an organization and print its usage')
  .requiredOption('--org <id>', 'organization id')
  .requiredOption('--type <type>', AllotmentTypes.join('|'))
  .option('--limit <n>', 'limit (0 with enforced false: unlimited)')
  .option('--grace <n>', 'grace limit: how far past the limit creations are still accepted')
  .option('--enforced <bool>', 'true|false: refuse creations past limit + grace')
  .action(async (opts: { org: string; type: string; limit?: string; grace?: string; enforced?: string }) => {
    // Arguments are checked before the database is opened.
    const orgId = parseId(opts.org, '--org');
    const type = opts.type;
    if (!isAllotmentType(type)) throw new Error(`--type must be one of ${AllotmentTypes.join(', ')}`);
    const count = (value: string | undefined, flag: string) => {
      if (value === undefined) return undefined;
      if (!/^\d+$/.test(value) || Number(value) > MAX_LIMIT) throw new Error(`${flag} must be an integer from 0 to ${MAX_LIMIT}`);
      return Number(value);
    };
    if (opts.enforced !== undefined && opts.enforced !== 'true' && opts.enforced !== 'false') throw new Error('--enforced must be true or false');
    const change = {
      limit: count(opts.limit, '--limit'),
      grace_limit: count(opts.grace, '--grace'),
      enforced: opts.enforced === undefined ? undefined : opts.enforced === 'true',
    };
    await withServices(async ({ organizations }) => {
      const usage = await organizations.setAllotmentLimits(orgId, type, change);
      out({ organization_id: orgId, type, ...usage });
    });
  });

const token = program.command('token').description('API tokens');
token
  .command('create')
  .description('create an API token for an organization (with --user: a token acting as that user, with their role)')
  .requiredOption('--org <id>', 'organization id')
  .option('--role <role>', `one of ${Roles.join('|')} (required without --user; with --user it must be the user's role)`)
  .option('--user <id>', 'user id: the token acts as this user of the organization and follows their role')
  .action(async (opts: { org: string; role?: string; user?: string }) => {
    // Arguments are checked before the database is opened.
    const orgId = parseId(opts.org, '--org');
    const userId = opts.user === undefined ? null : parseId(opts.user, '--user');
    const role = opts.role;
    if (role !== undefined ? !isRole(role) : userId === null) throw new Error(`--role must be one of ${Roles.join(', ')}`);
    await withServices(async ({ organizations, tokens, users }) => {
      if (!(await organizations.findById(orgId))) throw new Error(`no organization ${orgId}`);
      if (userId === null) {
        if (!isRole(role)) throw new Error(`--role must be one of ${Roles.join(', ')}`);
        out({ auth_token: await tokens.issue(orgId, role, role) });
        return;
      }
      const user = await users.get(orgId, userId).catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'not_found') return null;
        throw err;
      });
      if (!user || !isRole(user.role)) throw new Error(`no user ${userId} in organization ${orgId}`);
      if (role !== undefined && role !== user.role) throw new Error(`--role ${role} is not the role of user ${userId} (${user.role})`);
      out({ auth_token: await tokens.issue(orgId, user.role, `user ${userId}`, userId), user_id: userId, role: user.role });
    });
  });

const user = program.command('user').description('people who sign in to the dashboard');
user
  .command('invite')
  .description('invite a person to an organization and print the link where they choose their password (again for someone invited earlier: a new link)')
  .requiredOption('--org <id>', 'organization id')
  .requiredOption('--email <address>', 'their email address')
  .option('--role <role>', `one of ${Roles.join('|')}`, 'viewer')
  .action(async (opts: { org: string; email: string; role: string }) => {
    const orgId = parseId(opts.org, '--org');
    const role = opts.role;
    if (!isRole(role)) throw new Error(`--role must be one of ${Roles.join(', ')}`);
    await withServices(async ({ organizations, users }) => {
      if (!(await organizations.findById(orgId))) throw new Error(`no organization ${orgId}`);
      const invited = await users.inviteWithLink(orgId, opts.email, role);
      out({ user_id: invited.userId, invite_url: invited.url });
    });
  });

const mediaCommand = program.command('media').description('media');
mediaCommand
  .command('backfill-hls')
  .description('queue the HLS ladder of every ready video that has none (videos processed before ladders existed); the workers encode them')
  .option('--org <id>', 'only this organization')
  .action(async (opts: { org?: string }) => {
    const organizationId = opts.org === undefined ? undefined : parseId(opts.org, '--org');
    await withServices(async ({ videoMedia }) => out({ queued: await videoMedia.queueLadderBackfill(organizationId) }));
  });

program
  .command('upload')
  .description('upload a local file as a new video (tus, resumable: run it again after an interruption); --wait until it is ready')
  .argument('<file>', 'the video file')
  .option('--name <name>', "the video's name (default: the file's name)")
  .option('--org <id>', 'organization id', '1')
  .option('--url <base>', 'the server (default: PUBLIC_URL, else http://HOST:PORT)')
  .option('--wait', 'wait until the video is ready or in error')
  .action(async (file: string, opts: { name?: string; org: string; url?: string; wait?: boolean }) => {
    // Arguments are checked before the database is opened.
    const organizationId = parseId(opts.org, '--org');
    if (opts.url !== undefined && !/^https?:\/\/[^/]/.test(opts.url)) throw new Error('--url must be an http(s) URL');
    const config = loadConfig();
    const base = opts.url ?? config.publicUrl;
    await withServices(async (services) => {
      if (!(await services.organizations.findById(organizationId))) throw new Error(`no organization ${organizationId}`);
      const outcome = await uploadFile(services, {
        file,
        name: opts.name,
        organizationId,
        base,
        wait: opts.wait === true,
        resumeFile: path.join(config.dataDir, 'cli-uploads.json'),
      });
      out(outcome);
      if (outcome.status === 'error') process.exitCode = 1;
    });
  });

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
