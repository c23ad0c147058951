// `npm start`: the server from the bundle the build left in dist/ (a start in well under a second),
// or from the TypeScript through tsx when src/ changed since (or nothing was built).
//
// The bundle is compiled through vm.Script with V8's code cache (dist/server.cjs.<node version>.cache):
// parsing and compiling 4 MB of JavaScript is most of what is left of a start. The first start
// without a cache writes one a few seconds in, once the functions a start and a first request run
// are compiled, so that they come from the cache too. A cache V8 rejects (another Node, other flags)
// is written again.
import fs from 'node:fs';
import { createRequire, Module } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const bundle = path.join(root, 'dist', 'server.cjs');

/** Whether some TypeScript file under `dir` was changed after `since` (ms). */
function changedSince(dir, since) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory() ? changedSince(file, since) : entry.name.endsWith('.ts') && fs.statSync(file).mtimeMs > since) return true;
  }
  return false;
}

function builtAt() {
  try {
    return fs.statSync(path.join(root, 'dist', '.built')).mtimeMs;
  } catch {
    return null;
  }
}

function runBundle() {
  // The server's V8 flags (src/runtime.ts) before the compile: a cache made under them is refused under others.
  for (const flag of JSON.parse(fs.readFileSync(path.join(root, 'src', 'v8-flags.json'), 'utf8'))) v8.setFlagsFromString(flag);
  const cacheFile = `${bundle}.${process.version}.cache`;
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    // No cache yet: written below.
  }
  const script = new vm.Script(Module.wrap(fs.readFileSync(bundle, 'utf8')), {
    filename: bundle,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (process.env.START_TRACE === '1') {
    process.stderr.write(`start: bundle, code cache ${!cachedData ? 'none yet' : script.cachedDataRejected ? 'refused' : 'used'}\n`);
  }
  if (!cachedData || script.cachedDataRejected) {
    setTimeout(() => {
      try {
        const temporary = `${cacheFile}.${process.pid}`;
        fs.writeFileSync(temporary, script.createCachedData());
        fs.renameSync(temporary, cacheFile);
      } catch {
        // A read-only install: every start compiles, as without a cache.
      }
    }, 3000).unref();
  }
  const module = new Module(bundle);
  module.filename = bundle;
  module.paths = Module._nodeModulePaths(path.dirname(bundle));
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));
}

const built = builtAt();
if (built !== null && !changedSince(path.join(root, 'src'), built)) {
  runBundle();
} else {
  if (built !== null) process.stderr.write('reelbase: src/ changed since the last build; starting through tsx (`npm run build` starts faster)\n');
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(root, 'src', 'server.ts')).href);
}
