import { EventEmitter } from 'node:events';

/**
 * In-process hints from the API to the ingest running in the same process: "a stream or instance
 * was deleted, check your publishers now". The ingest re-checks the database before acting, so a
 * hint from another app sharing the process is harmless; other processes notice at their next
 * heartbeat (LIVE_HEALTH_INTERVAL_SECONDS).
 */
class LiveSignals extends EventEmitter {
  revoked(): void {
    this.emit('revoked');
  }
}

export const liveSignals = new LiveSignals();
liveSignals.setMaxListeners(100);
