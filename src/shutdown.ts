import { ConfigError } from './config.ts';

/**
 * Graceful shutdown of the server process (src/server.ts). On SIGTERM or SIGINT, or when the npm
 * process that started it goes away, the process drains: everything that accepts work stops
 * accepting and finishes what it has (in-flight HTTP requests, running jobs, which are released
 * when they cannot finish in time), then the resources they used are released, and the process
 * exits 0. Should that take longer than SHUTDOWN_TIMEOUT_SECONDS (default 10) it exits 1 with a
 * message, so that a supervisor is never left waiting.
 */

export const DEFAULT_SHUTDOWN_TIMEOUT_SECONDS = 10;

/** SHUTDOWN_TIMEOUT_SECONDS in milliseconds; a value that is not a positive number is refused. */
export function shutdownTimeoutMs(env: Record<string, string | undefined> = process.env): number {
  const raw = env.SHUTDOWN_TIMEOUT_SECONDS;
  if (raw === undefined || raw.trim() === '') return DEFAULT_SHUTDOWN_TIMEOUT_SECONDS * 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600) {
    throw new ConfigError(`Invalid configuration: SHUTDOWN_TIMEOUT_SECONDS must be a number of seconds in (0, 3600], got "${raw}"`);
  }
  return Math.round(seconds * 1000);
}

/**
 * How long running jobs may go on before they are aborted and released: most of the shutdown
 * time, keeping a part of it (at most 2 s) for aborting them, releasing their leases and closing
 * the database.
 */
export function jobGraceMs(timeoutMs: number): number {
  return Math.max(0, timeoutMs - Math.min(2000, Math.floor(timeoutMs / 3)));
}

type Step = { name: string; run: () => Promise<void> };

export interface ShutdownOptions {
  timeoutMs: number;
  /** Where the shutdown's lines go (default stderr). */
  write?: (line: string) => void;
  /** Ends the process (default process.exit); tests replace it. */
  exit?: (code: number) => void;
}

/**
 * The steps of a shutdown, in two stages: `drain` steps (stop accepting, finish in-flight work) run
 * at the same time, as each only waits for its own work; `release` steps (mailer, database) run
 * after them, in the order added, since the drained work still used them.
 */
export class Shutdown {
  private readonly drains: Step[] = [];
  private readonly releases: Step[] = [];
  private started: Promise<void> | null = null;
  private readonly write: (line: string) => void;
  private readonly exit: (code: number) => void;

  constructor(private readonly options: ShutdownOptions) {
    this.write = options.write ?? ((line) => void process.stderr.write(line));
    this.exit = options.exit ?? ((code) => process.exit(code));
  }

  get stopping(): boolean {
    return this.started !== null;
  }

  drain(name: string, run: () => Promise<void>): void {
    this.drains.push({ name, run });
  }

  release(name: string, run: () => Promise<void>): void {
    this.releases.push({ name, run });
  }

  /** Starts the shutdown (once: later calls return the same promise) and ends the process. */
  stop(reason: string): Promise<void> {
    this.started ??= this.run(reason);
    return this.started;
  }

  private async run(reason: string): Promise<void> {
    const seconds = this.options.timeoutMs / 1000;
    this.write(`reelbase: ${reason}, shutting down (at most ${seconds}s)\n`);
    // Kept referenced: should the drain wait on something that holds no handle, the deadline still comes.
    const deadline = setTimeout(() => {
      this.write(`reelbase: shutdown did not finish within ${seconds}s (SHUTDOWN_TIMEOUT_SECONDS), exiting with what is left\n`);
      this.exit(1);
    }, this.options.timeoutMs);
    let failed = false;
    const attempt = async (step: Step) => {
      try {
        await step.run();
      } catch (err) {
        failed = true;
        this.write(`reelbase: shutdown step "${step.name}" failed: ${err instanceof Error ? err.message : String(err)}\n`);
      }
    };
    await Promise.all(this.drains.map(attempt));
    for (const step of this.releases) await attempt(step);
    clearTimeout(deadline);
    this.write(failed ? 'reelbase: stopped, with errors\n' : 'reelbase: stopped\n');
    this.exit(failed ? 1 : 0);
  }
}

/**
 * When started by an npm script (`npm start`), the lifetime of this process is that of npm: should
 * npm go away without passing a signal on (killed with SIGKILL, or a shell between the two that
 * does not forward signals), this process is re-parented, and `onGone` is called. A process
 * started directly (systemd, a container's init, `node src/server.ts &`) is not watched: there its
 * parent's exit does not mean it should stop.
 */
export function watchNpmParent(onGone: () => void, env: Record<string, string | undefined> = process.env, everyMs = 500): () => void {
  const initial = process.ppid;
  if (!env.npm_lifecycle_event || initial <= 1) return () => {};
  const timer = setInterval(() => {
    if (process.ppid !== initial) {
      clearInterval(timer);
      onGone();
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
