// What `npm start` (scripts/start.mjs) and the CLI (scripts/cli.mjs) share: run dist/<name>.cjs, the
// bundle the build left (`npm ci`, `npm run build`), or src/<name>.ts through tsx when src/ changed
// since (or nothing was built), so that a checkout or an edit never runs stale.
//
// The bundle is compiled through vm.Script with V8's code cache (dist/<name>.cjs.<node version>.cache,
// and a digest of Node's command-line flags when it has some, as `npm start` gives it):
// parsing and compiling 4 MB of JavaScript is most of what is left of a start. A run without a cache
// (or with one V8 refuses: another Node, other flags) writes one, once the functions a start runs are
// compiled, so that they come from the cache too.
import { isAscii } from 'node:buffer';
import fs from 'node:fs';
import { createRequire, Module } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

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

/** A short digest of `text` (FNV-1a, 32 bits, hex): names a cache file, needs nothing loaded. */
function digest(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

function writeCache(script, cacheFile) {
  try {
    const temporary = `${cacheFile}.${process.pid}`;
    fs.writeFileSync(temporary, script.createCachedData());
    fs.renameSync(temporary, cacheFile);
  } catch {
    // A read-only install: every run compiles, as without a cache.
  }
}

/**
 * The bundle's text. The build leaves it ASCII (scripts/build.mjs), which is read as Latin-1: a copy of
 * its bytes into a one-byte string, where decoding 4 MB of UTF-8 took 30-120 ms of a start; V8 also
 * scans a one-byte source faster as it compiles functions lazily.
 */
function sourceOf(file) {
  const bytes = fs.readFileSync(file);
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/**
 * `built`: the build's stamp (ms), which names a cache kept outside dist/. `cacheAfterMs`: when a run
 * without a usable cache writes one; 'exit' for short commands.
 */
function runBundle(bundle, built, cacheAfterMs) {
  // The server's V8 flags (src/runtime.ts) before the compile: a cache made under them is refused under others.
  for (const flag of JSON.parse(fs.readFileSync(path.join(root, 'src', 'v8-flags.json'), 'utf8'))) v8.setFlagsFromString(flag);
  // One cache per set of command-line flags (`npm start`'s, or none): a start with other flags would
  // otherwise have the cache refused, and write its own over the other's. Flags whose values change
  // from run to run (a profile's directory, an inspector's port) leave a cache each, until the next build.
  const flags = process.execArgv.length > 0 ? `.${digest(process.execArgv.join(' '))}` : '';
  // CODE_CACHE_DIR: somewhere writable when dist/ is not (a read-only install), or a folder of its
  // own. A build empties dist/ of caches but not that folder, so its names carry the build's stamp:
  // V8 checks a cache against its source's length only, and another build may have the same.
  const cacheFile = process.env.CODE_CACHE_DIR
    ? path.join(process.env.CODE_CACHE_DIR, `${path.basename(bundle)}.${digest(String(built))}.${process.version}${flags}.cache`)
    : `${bundle}.${process.version}${flags}.cache`;
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    // No cache yet: written below.
  }
  const script = new vm.Script(Module.wrap(sourceOf(bundle)), {
    filename: bundle,
    cachedData,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (process.env.START_TRACE === '1') {
    process.stderr.write(`start: bundle, code cache ${!cachedData ? 'none yet' : script.cachedDataRejected ? 'refused' : 'used'}\n`);
  }
  if (!cachedData || script.cachedDataRejected) {
    if (cacheAfterMs === 'exit') process.once('exit', () => writeCache(script, cacheFile));
    else setTimeout(() => writeCache(script, cacheFile), cacheAfterMs).unref();
  }
  const module = new Module(bundle);
  module.filename = bundle;
  module.paths = Module._nodeModulePaths(path.dirname(bundle));
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle));
}

/**
 * Runs `name` (server or cli) from its bundle when it is as new as src/, else through tsx; `stale`
 * is said on stderr in the second case when a bundle exists.
 */
export async function run(name, { cacheAfterMs, stale }) {
  const built = builtAt();
  const bundle = path.join(root, 'dist', `${name}.cjs`);
  if (built !== null && fs.existsSync(bundle) && !changedSince(path.join(root, 'src'), built)) {
    runBundle(bundle, built, cacheAfterMs);
    return;
  }
  if (built !== null && stale) process.stderr.write(stale);
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(root, 'src', `${name}.ts`)).href);
}
