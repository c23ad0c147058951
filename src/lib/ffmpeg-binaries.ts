import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Which ffmpeg and ffprobe run: ffmpeg parses untrusted uploads, so a security-maintained build is
 * preferred. In order: FFMPEG_PATH / FFPROBE_PATH; else the one on PATH when it is version 5 or
 * newer (a distribution's, e.g. Debian's, receives security fixes); else the static build of the npm
 * package (@ffmpeg-installer/ffmpeg, @ffprobe-installer/ffprobe): zero setup, but frozen (ffmpeg's
 * is a 2018 snapshot).
 */

export type ToolName = 'ffmpeg' | 'ffprobe';
export type ToolSource = 'env' | 'path' | 'npm';

export interface ToolVersion {
  /** As the tool prints it: `5.1.6-0+deb12u1`, `n7.1`, `N-47683-g0e8eb07980-static`. */
  text: string;
  /** Release major version; null for a build from git (`N-…`), which has none. */
  major: number | null;
  /** Last year of its copyright line: the age of a git build. */
  year: number | null;
}

/** Reads the first line of `ffmpeg -version` / `ffprobe -version`. */
export function parseToolVersion(output: string): ToolVersion | null {
  const line = output.split('\n', 1)[0] ?? '';
  const match = /^ff(?:mpeg|probe) version (\S+)/.exec(line);
  if (!match) return null;
  const text = match[1];
  const release = /^n?(\d+)\.\d+/.exec(text);
  const copyright = /Copyright \(c\) \d{4}-(\d{4})/.exec(line);
  return { text, major: release ? Number(release[1]) : null, year: copyright ? Number(copyright[1]) : null };
}

/** Version 5 or newer; a git build counts when it is from 2022 (when 5.0 was released) or later. */
export function isCurrentVersion(version: ToolVersion | null): boolean {
  if (!version) return false;
  return version.major !== null ? version.major >= 5 : version.year !== null && version.year >= 2022;
}

export interface ToolChoice {
  path: string;
  source: ToolSource;
}

/** The choice itself, from what was found: the configured path, the one on PATH and its version, the npm one. */
export function chooseTool(candidates: {
  configured?: string;
  onPath?: { path: string; version: ToolVersion | null } | null;
  bundled: () => string;
}): ToolChoice {
  if (candidates.configured) return { path: candidates.configured, source: 'env' };
  if (candidates.onPath && isCurrentVersion(candidates.onPath.version)) return { path: candidates.onPath.path, source: 'path' };
  return { path: candidates.bundled(), source: 'npm' };
}

/** The executable file `name` in the directories of PATH, or null. */
export function findOnPath(name: string, searchPath: string | undefined): string | null {
  for (const dir of (searchPath ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, name);
    try {
      if (fs.statSync(candidate).isFile()) {
        fs.accessSync(candidate, fs.constants.X_OK);
        return candidate;
      }
    } catch {
      // not there, or not executable
    }
  }
  return null;
}

interface ToolRun {
  version: ToolVersion | null;
  /** Why `<binary> -version` did not run to a clean exit (start-up checks print it); null when it did. */
  problem: string | null;
}

const runs = new Map<string, ToolRun>();

/**
 * Where clean `-version` runs are remembered between starts (DATA_DIR/.tool-versions.json), by the
 * binary's path, size, modification time and inode: a distribution's ffmpeg, dynamically linked to
 * a hundred libraries, takes ~300 ms to print its version, twice per start. An upgraded binary is
 * another file and is asked again.
 */
let remembered: { file: string; entries: Record<string, ToolVersion | null> } | null = null;

export function rememberToolVersionsIn(file: string): void {
  let entries: Record<string, ToolVersion | null> = {};
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) entries = parsed as Record<string, ToolVersion | null>;
  } catch {
    // None yet (or unreadable): asked again, and written below.
  }
  remembered = { file, entries };
}

function identityOf(binary: string): string | null {
  try {
    const stat = fs.statSync(binary);
    return stat.isFile() ? `${path.resolve(binary)}|${stat.size}|${stat.mtimeMs}|${stat.ino}` : null;
  } catch {
    return null;
  }
}

/** `<binary> -version`, once per binary and process, and once per binary file when remembered (above). */
function runVersion(binary: string): ToolRun {
  let run = runs.get(binary);
  if (run) return run;
  const identity = remembered ? identityOf(binary) : null;
  if (remembered && identity && Object.hasOwn(remembered.entries, identity)) {
    run = { version: remembered.entries[identity], problem: null };
  } else {
    const result = spawnSync(binary, ['-version'], { encoding: 'utf8', timeout: 3000, stdio: ['ignore', 'pipe', 'ignore'] });
    const problem = runProblem(result);
    run = { version: problem === null ? parseToolVersion(result.stdout) : null, problem };
    // Only clean runs: a failure is looked at again at the next start.
    if (remembered && identity && problem === null) {
      remembered.entries[identity] = run.version;
      try {
        fs.writeFileSync(remembered.file, `${JSON.stringify(remembered.entries)}\n`);
      } catch {
        // The data directory does not exist yet (the first start): remembered at the next.
      }
    }
  }
  runs.set(binary, run);
  return run;
}

function runProblem(result: SpawnSyncReturns<string>): string | null {
  const error: NodeJS.ErrnoException | undefined = result.error;
  const code = error?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied: not an executable file';
  if (code === 'ETIMEDOUT') return '`-version` did not answer within 3 s';
  if (result.error) return result.error.message;
  if (result.signal) return `\`-version\` was killed by ${result.signal}`;
  if (result.status !== 0) return `\`-version\` exited with status ${result.status}`;
  return null;
}

/** The version `<binary> -version` prints; null when it does not run, fails, or does not answer in time. */
export function toolVersion(binary: string): ToolVersion | null {
  return runVersion(binary).version;
}

/** Why the binary cannot be run (missing, not executable, failing, hung), or null when `-version` runs cleanly. */
export function toolProblem(binary: string): string | null {
  return runVersion(binary).problem;
}

const chosen = new Map<string, ToolChoice>();

/** Resolves one tool (see the top of this file); remembered, so that the start-up line can say where it came from. */
export function resolveTool(name: ToolName, configured: string | undefined, searchPath: string | undefined, bundled: () => string): ToolChoice {
  const found = configured ? null : findOnPath(name, searchPath);
  const choice = chooseTool({ configured, onPath: found ? { path: found, version: toolVersion(found) } : null, bundled });
  chosen.set(choice.path, choice);
  return choice;
}

/** Where the binary in use came from (as resolved by `resolveTool`; a path it never resolved counts as configured). */
export function toolSource(binary: string): ToolSource {
  return chosen.get(binary)?.source ?? 'env';
}

/**
 * The line the server prints at start for a tool in use, and a warning when it is not a maintained
 * release (the npm fallback, or older than 5).
 */
export function describeTool(name: ToolName, binary: string): { line: string; warning: string | null } {
  const source = toolSource(binary);
  const version = toolVersion(binary);
  const from = { env: name === 'ffmpeg' ? 'FFMPEG_PATH' : 'FFPROBE_PATH', path: 'PATH', npm: 'npm package' }[source];
  const line = `${name}: ${binary} (version ${version?.text ?? 'unknown'}, from ${from})`;
  let warning: string | null = null;
  if (source === 'npm') {
    const built = version?.year ? ` built in ${version.year}` : '';
    warning =
      `warning: ${name} is the static build of the npm package${built}, which receives no security fixes, and it parses untrusted uploads; ` +
      `install a maintained ${name} 5 or newer on the PATH (Debian: apt-get install ffmpeg) or set ${name === 'ffmpeg' ? 'FFMPEG_PATH' : 'FFPROBE_PATH'}`;
  } else if (!isCurrentVersion(version)) {
    warning = `warning: ${name} at ${binary} is ${version ? `version ${version.text}` : 'of an unknown version'}, older than the maintained releases (5 or newer)`;
  }
  return { line, warning };
}
