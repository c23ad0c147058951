// Import boundaries of Reelbase: docs/conventions.md, enforced.
// Run: npm run lint:deps (scripts/lint-deps.mjs: these rules over src/ only, tests may import anything, plus cycles
// between areas, src/<folder> and src/modules/<area>, which a rule here cannot express precisely).
// Data flow is one way: routes → services → repositories → db. HTTP (src/http/**, fastify) stays in the web layer.

/** The web layer: the only code that may know about HTTP. */
const WEB_LAYER = ['^src/app\\.ts$', '^src/modules/index\\.ts$', '^src/modules/.+\\.routes\\.ts$', '^src/http/'];
const FASTIFY = '(^|/)node_modules/(fastify|@fastify/[^/]+)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No import cycles between files (type-only imports included): a cycle makes load order matter (a binding read before its module has run: ' +
        'ReferenceError at start-up) and means two files are really one. Move the shared part into a third file both import.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment:
        'A file nothing imports (and that imports nothing) is dead code or a forgotten wiring step. Entry points, migrations, ' +
        'browser assets and declaration files are exempt.',
      from: {
        orphan: true,
        pathNot: [
          '^src/(server|cli|worker)\\.ts$',
          '^src/db/migrations/',
          '^src/web/assets/',
          '\\.d\\.[cm]?ts$',
          '(^|/)\\.[^/]+\\.(?:js|cjs|mjs|ts|cts|mts|json)$', // dot files
        ],
      },
      to: {},
    },
    {
      name: 'http-only-in-web-layer',
      severity: 'error',
      comment:
        'src/http/** is the HTTP layer (request context, hooks, paging, negotiation, errors as answers): only src/app.ts, ' +
        'src/modules/index.ts, *.routes.ts and src/http itself may import it. Services, repositories, jobs, db and lib know nothing of HTTP.',
      from: { path: '^src/', pathNot: WEB_LAYER },
      to: { path: '^src/http/' },
    },
    {
      name: 'repository-only-down',
      severity: 'error',
      comment:
        'A repository holds only Kysely queries over the database: it must not reach up into services, routes or HTTP ' +
        '(route → service → repository → db, one way).',
      from: { path: '\\.repository\\.ts$' },
      to: { path: ['\\.service\\.ts$', '\\.routes\\.ts$', '^src/http/'] },
    },
    {
      name: 'service-not-to-web',
      severity: 'error',
      comment:
        'A service holds the rules and knows nothing of HTTP: it must not import routes or src/http/** ' + '(route → service → repository → db, one way).',
      from: { path: '\\.service\\.ts$' },
      to: { path: ['\\.routes\\.ts$', '^src/http/'] },
    },
    {
      name: 'fastify-only-in-web-layer',
      severity: 'error',
      comment:
        'Only the web layer (src/app.ts, *.routes.ts, src/http/**) may import fastify or @fastify/*: everything else must run ' +
        'without a server (jobs, CLI, worker, tests of services).',
      from: { path: '^src/', pathNot: ['^src/app\\.ts$', '^src/modules/.+\\.routes\\.ts$', '^src/http/'] },
      to: { path: FASTIFY },
    },
    {
      name: 'lib-is-a-leaf',
      severity: 'error',
      comment: 'src/lib/** are small generic helpers: they import nothing from src/ outside src/lib, so anything can use them.',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'db-not-to-upper-layers',
      severity: 'error',
      comment: 'src/db/** (connections, dialects, schema, migrations, read cache) is the bottom layer: it must not import modules, http or jobs.',
      from: { path: '^src/db/' },
      to: { path: '^src/(modules|http|jobs)/' },
    },
    {
      name: 'jobs-not-to-modules',
      severity: 'error',
      comment:
        'src/jobs/** is the queue mechanics (enqueue, runner, backoff); the handlers of a job live next to their module and ' +
        'register themselves, so the queue never depends on an area.',
      from: { path: '^src/jobs/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'routes-not-to-data',
      severity: 'error',
      comment:
        'Routes parse and answer; they call the service and nothing else: no repository and no src/db/** at run time ' +
        '(type-only imports, e.g. of row types, are allowed).',
      from: { path: '\\.routes\\.ts$' },
      to: { path: ['\\.repository\\.ts$', '^src/db/'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file or package fails at run time.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment:
        'src/ runs in production, where devDependencies may be absent (npm ci --omit=dev): it may import only dependencies ' +
        '(type-only imports of @types/* and the like are fine).',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'], pathNot: ['(^|/)node_modules/@types/'] },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    // See type-only imports too (they are part of the architecture); rules that should ignore them say so.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    moduleSystems: ['es6', 'cjs'],
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
