import { describe, expect, it } from 'vitest';
import { jobGraceMs, Shutdown, shutdownTimeoutMs } from '../../src/shutdown.ts';

/** A shutdown whose lines and exit code are recorded instead of written and obeyed. */
function recorded(timeoutMs: number) {
  const lines: string[] = [];
  let resolveExit: (code: number) => void = () => {};
  const exited = new Promise<number>((resolve) => (resolveExit = resolve));
  const shutdown = new Shutdown({ timeoutMs, write: (line) => void lines.push(line), exit: (code) => resolveExit(code) });
  return { shutdown, lines, exited };
}

describe('shutdown', () => {
  it('exits 1 with a message when a drain outlasts SHUTDOWN_TIMEOUT_SECONDS', async () => {
    const { shutdown, lines, exited } = recorded(300);
    const released: string[] = [];
    shutdown.drain('http', () => new Promise(() => {})); // a request that never ends
    shutdown.release('database', async () => void released.push('database'));
    const started = Date.now();
    void shutdown.stop('SIGTERM');
    expect(await exited).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(lines.join('')).toContain('shutdown did not finish within 0.3s');
  });

  it('drains together, then releases in order, and exits 0', async () => {
    const { shutdown, lines, exited } = recorded(2000);
    const order: string[] = [];
    shutdown.drain('http', async () => void order.push('http'));
    shutdown.drain('jobs', async () => void order.push('jobs'));
    shutdown.release('mailer', async () => void order.push('mailer'));
    shutdown.release('database', async () => void order.push('database'));
    void shutdown.stop('SIGINT');
    void shutdown.stop('SIGTERM'); // once only
    expect(await exited).toBe(0);
    expect(order).toEqual(['http', 'jobs', 'mailer', 'database']);
    expect(lines.filter((l) => l.includes('shutting down'))).toHaveLength(1);
  });

  it('reads SHUTDOWN_TIMEOUT_SECONDS and keeps part of it for releasing jobs', () => {
    expect(shutdownTimeoutMs({})).toBe(10_000);
    expect(shutdownTimeoutMs({ SHUTDOWN_TIMEOUT_SECONDS: '2.5' })).toBe(2500);
    expect(() => shutdownTimeoutMs({ SHUTDOWN_TIMEOUT_SECONDS: '0' })).toThrow(/SHUTDOWN_TIMEOUT_SECONDS/);
    expect(jobGraceMs(10_000)).toBe(8000);
    expect(jobGraceMs(1000)).toBe(667);
  });
});
