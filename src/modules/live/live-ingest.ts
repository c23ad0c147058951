import { randomUUID } from 'node:crypto';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../../config.ts';
import { encodeAmf0Values, type AmfObject } from '../../live/amf.ts';
import { audioTagInfo, flvTag, videoTagInfo } from '../../live/flv.ts';
import { FeedHealth } from '../../live/health.ts';
import { countParts } from '../../live/hls-index.ts';
import { PartPublisher } from '../../live/hls-publisher.ts';
import { HlsPart } from '../../live/packager.ts';
import { localLiveDir, partName } from '../../live/paths.ts';
import { RtmpServer, type FeedRole, type PublishDecision, type PublishRequest, type PublishSink, type RtmpConnection } from '../../live/rtmp-server.ts';
import { liveSignals } from '../../live/signals.ts';
import type { Media } from '../../media/media.ts';
import type { LiveStateService } from './live-state.service.ts';

export interface IngestLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const silent: IngestLog = { info() {}, warn() {}, error() {} };

/** Applications of the ingest URL: the primary feed, and the backup feed of redundant streams. */
const APPS: Record<string, FeedRole> = { live: 'primary', backup: 'backup' };

type Tag = [type: 8 | 9, timestamp: number, body: Buffer];

export interface BroadcastStats {
  /**
   * Wall clock (ms) at which the publisher sent the first frame of the broadcast's first HLS part:
   * the earliest arrival of any tag minus its timestamp, i.e. the publisher's real-time origin.
   */
  firstFrameAt: number | null;
  /** CPU seconds its HLS packagers (ffmpeg, remux only) used so far. */
  packagerCpuSeconds: number;
}

/** One accepted publish: measured all along, packaged while it is its broadcast's active feed. */
class Feed implements PublishSink {
  readonly id = randomUUID();
  readonly health: FeedHealth;
  metadata: AmfObject | null = null;
  videoConfig: Buffer | null = null;
  audioConfig: Buffer | null = null;
  sawVideo = false;
  sawAudio = false;
  state: 'waiting' | 'joining' | 'joined' | 'ended' = 'waiting';
  broadcast: Broadcast | null = null;
  queue: Tag[] = [];
  /** min(arrival − timestamp) over all tags: the wall clock of the publisher's timestamp 0. */
  clockOrigin = Infinity;

  constructor(
    readonly ingest: LiveIngest,
    readonly role: FeedRole,
    readonly streamId: number,
    readonly connection: RtmpConnection,
    healthWindowMs: number,
  ) {
    this.health = new FeedHealth(healthWindowMs);
  }

  get hasVideo() {
    return this.sawVideo || this.videoConfig !== null || this.metadata?.videocodecid !== undefined;
  }

  get hasAudio() {
    return this.sawAudio || this.audioConfig !== null || this.metadata?.audiocodecid !== undefined;
  }

  onMetadata(metadata: AmfObject) {
    this.metadata = metadata;
    this.health.onMetadata(metadata);
  }

  onMedia(type: 8 | 9, timestamp: number, body: Buffer) {
    if (this.state === 'ended') return;
    if (type === 9) {
      this.sawVideo = true;
      this.health.onVideo(timestamp, body);
      if (videoTagInfo(body).isConfig) this.videoConfig = body;
    } else {
      this.sawAudio = true;
      this.health.onAudio(timestamp, body);
      if (audioTagInfo(body).isConfig) this.audioConfig = body;
    }
    const origin = Date.now() - timestamp;
    if (origin < this.clockOrigin) this.clockOrigin = origin;
    if (this.state === 'joined') {
      this.broadcast?.onMedia(this, type, timestamp, body);
      return;
    }
    // Held while the broadcast is being started in the database (a few milliseconds).
    if (this.queue.length < 5000) this.queue.push([type, timestamp, body]);
    if (this.state === 'waiting') {
      this.state = 'joining';
      void this.ingest.join(this);
    }
  }

  onEnd(reason: string) {
    if (this.state === 'ended') return;
    const wasJoined = this.state === 'joined';
    this.state = 'ended';
    this.queue = [];
    void this.ingest.feedEnded(this, wasJoined, reason);
  }

  /** The FLV tags a new packager part starts with: metadata and codec configurations. */
  prelude(): Buffer[] {
    const out: Buffer[] = [];
    if (this.metadata) out.push(flvTag(18, 0, encodeAmf0Values(['onMetaData', this.metadata])));
    if (this.videoConfig) out.push(flvTag(9, 0, this.videoConfig));
    if (this.audioConfig) out.push(flvTag(8, 0, this.audioConfig));
    return out;
  }
}

/** One live instance received by this process: its feeds, its HLS output, its heartbeat. */
class Broadcast {
  readonly feeds: Partial<Record<FeedRole, Feed>> = {};
  private active: Feed | null = null;
  private part: HlsPart | null = null;
  private partStarted = false;
  private nextPart = 1;
  private finishing: Promise<void> = Promise.resolve();
  private windowTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  lastMediaAt = Date.now();
  closed = false;
  /** Every packager part so far (their CPU is read for the bench). */
  readonly parts: HlsPart[] = [];
  /** The feed and first timestamp of the first part (latency measurements). */
  private firstPart: { feed: Feed; timestamp: number } | null = null;

  constructor(
    readonly ingest: LiveIngest,
    readonly instanceId: number,
    readonly playerUuid: string,
    readonly segmentLength: number,
  ) {}

  /** The packager's local folder (its parts' folders inside); the output itself is in the file store. */
  get dir() {
    return localLiveDir(this.ingest.media.workDir, this.playerUuid);
  }

  async init() {
    // A broadcast continued after a restart, or taken over from another ingest, goes on after the parts already published.
    this.nextPart = (await countParts(this.ingest.media.store, this.playerUuid)) + 1;
    this.heartbeatTimer = setInterval(() => void this.beat(), this.ingest.config.live.healthIntervalSeconds * 1000);
    this.heartbeatTimer.unref();
  }

  attach(feed: Feed) {
    const previous = this.feeds[feed.role];
    if (previous && previous !== feed) previous.connection.close('replaced');
    this.feeds[feed.role] = feed;
    feed.broadcast = this;
    if (this.windowTimer) {
      clearTimeout(this.windowTimer);
      this.windowTimer = null;
    }
    if (!this.active || (feed.role === 'primary' && this.active.role === 'backup')) this.switchTo(feed);
    void this.beat();
  }

  /** The active feed changes: the current part ends, a new one starts with the feed's next keyframe. */
  private switchTo(feed: Feed | null) {
    this.closePart();
    this.active = feed;
  }

  private closePart() {
    const part = this.part;
    this.part = null;
    this.partStarted = false;
    if (part) {
      this.finishing = this.finishing.then(() => part.finish());
    }
  }

  private startPart(feed: Feed) {
    const name = partName(this.nextPart++);
    const publisher = new PartPublisher(this.ingest.media.store, this.playerUuid, name, path.join(this.dir, name), this.ingest.log);
    const part = new HlsPart(this.ingest.config.ffmpegPath, publisher, this.segmentLength, this.ingest.log);
    this.part = part;
    this.parts.push(part);
    this.partStarted = true;
    part.start({ hasAudio: feed.hasAudio, hasVideo: feed.hasVideo, prelude: feed.prelude() });
  }

  get stats(): BroadcastStats {
    return {
      firstFrameAt: this.firstPart && Number.isFinite(this.firstPart.feed.clockOrigin) ? this.firstPart.feed.clockOrigin + this.firstPart.timestamp : null,
      packagerCpuSeconds: this.parts.reduce((sum, p) => sum + p.cpuSeconds, 0),
    };
  }

  onMedia(feed: Feed, type: 8 | 9, timestamp: number, body: Buffer) {
    this.lastMediaAt = Date.now();
    if (feed !== this.active || this.closed) return;
    if (!this.partStarted) {
      // A part starts on a keyframe (or on audio when the feed has no video).
      const startsHere = type === 9 ? videoTagInfo(body).keyframe && videoTagInfo(body).isFrame : !feed.hasVideo;
      if (!startsHere) return;
      this.startPart(feed);
      this.firstPart ??= { feed, timestamp };
    }
    this.part?.writeTag(type, timestamp, body);
  }

  detach(feed: Feed) {
    if (this.feeds[feed.role] === feed) delete this.feeds[feed.role];
    if (this.active === feed) this.switchTo(this.feeds.primary ?? this.feeds.backup ?? null);
    if (!this.feeds.primary && !this.feeds.backup && !this.closed && !this.windowTimer) {
      // Nothing arrives: the broadcast ends unless a publisher comes back within the window.
      const windowMs = this.ingest.config.live.reconnectWindowSeconds * 1000;
      this.windowTimer = setTimeout(() => void this.end(), windowMs);
      this.windowTimer.unref();
    }
    void this.beat();
  }

  /** Reports health and keeps the broadcast held; cuts everything when it was deleted or taken over. */
  async beat() {
    if (this.closed) return;
    const now = Date.now();
    const health = { primary: this.feeds.primary?.health.sample(now) ?? null, backup: this.feeds.backup?.health.sample(now) ?? null };
    let kept: boolean;
    try {
      kept = await this.ingest.state.heartbeat(this.instanceId, this.ingest.sessionId, health);
    } catch (err) {
      this.ingest.log.warn({ err: (err as Error).message, instanceId: this.instanceId }, 'live: heartbeat failed');
      return;
    }
    if (!kept && !this.closed) await this.abort('the stream was deleted or is held elsewhere');
  }

  /** The window passed with no publisher: the broadcast is over and its recording is made. */
  private async end() {
    if (this.closed) return;
    this.closed = true;
    this.stopTimers();
    await this.finishing;
    try {
      // Every part is published (the recording is made from the store); what an earlier process left
      // in the local folder goes too, unless another ingest holds the broadcast meanwhile.
      if (await this.ingest.state.end(this.instanceId, this.ingest.sessionId, Math.floor(this.lastMediaAt / 1000))) {
        await fsp.rm(this.dir, { recursive: true, force: true });
      }
    } catch (err) {
      this.ingest.log.error({ err: (err as Error).message, instanceId: this.instanceId }, 'live: could not end the broadcast (the sweeper will)');
    }
    this.ingest.forget(this);
  }

  /** Deleted, revoked or taken over: publishers are cut, packaging stops, nothing is recorded here. */
  async abort(reason: string) {
    if (this.closed) return;
    this.closed = true;
    this.stopTimers();
    const part = this.part;
    this.part = null;
    for (const feed of Object.values(this.feeds)) feed?.connection.close(reason);
    await part?.kill();
    await this.finishing;
    this.ingest.forget(this);
  }

  /** Process shutdown: packaging stops cleanly; the broadcast stays live for a restart or another ingest. */
  async shutdown() {
    this.closed = true;
    this.stopTimers();
    this.closePart();
    await this.finishing;
  }

  private stopTimers() {
    if (this.windowTimer) clearTimeout(this.windowTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.windowTimer = null;
    this.heartbeatTimer = null;
  }
}

/**
 * The live ingest of one API process: an RTMP server on RTMP_PORT that accepts publishers with a
 * valid stream key, moves their instance through its states, packages the media into HLS (remux
 * only) and samples its health. See docs/live.md.
 */
export class LiveIngest {
  /** Identifies this process's hold on broadcasts (ingest_session). */
  readonly sessionId = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly log: IngestLog;
  private readonly server: RtmpServer;
  private readonly broadcasts = new Map<number, Broadcast>();
  private readonly joining = new Map<number, Promise<Broadcast | null>>();
  private readonly feeds = new Set<Feed>();
  private readonly finished = new Map<number, BroadcastStats>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private stopping = false;
  private readonly onRevoked = () => void this.checkRevoked();
  port = 0;

  constructor(
    readonly config: Config,
    readonly state: LiveStateService,
    /** Where the output is published, and the local work folder the packager writes in first. */
    readonly media: Pick<Media, 'store' | 'workDir'>,
    log?: IngestLog,
  ) {
    this.log = log ?? silent;
    this.server = new RtmpServer({
      apps: Object.keys(APPS),
      authorize: (req) => this.authorize(req),
      log: this.log,
    });
  }

  async start(): Promise<number> {
    this.port = await this.server.listen(this.config.live.rtmpPort, this.config.live.rtmpHost);
    liveSignals.on('revoked', this.onRevoked);
    const every = Math.max(2000, this.config.live.healthIntervalSeconds * 1000);
    this.sweepTimer = setInterval(() => void this.sweep(), every);
    this.sweepTimer.unref();
    void this.sweep();
    void this.removeLocalLeftovers();
    this.log.info({ port: this.port }, 'live: RTMP ingest listening');
    return this.port;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    liveSignals.off('revoked', this.onRevoked);
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    const all = [...this.broadcasts.values()];
    await this.server.close();
    await Promise.all(all.map((b) => b.shutdown()));
    await Promise.allSettled([...this.joining.values()]);
    this.broadcasts.clear();
  }

  private async authorize(req: PublishRequest): Promise<PublishDecision> {
    const role = APPS[req.app];
    if (!role || this.stopping) return { refuse: 'Unknown application' };
    const check = await this.state.checkPublish(role, req.key, this.sessionId);
    if (!check.ok) {
      this.log.info({ app: req.app, remote: req.remoteAddress, reason: check.reason }, 'live: publish refused');
      return { refuse: check.reason };
    }
    // This process already receives this feed of the stream: one publisher per feed.
    for (const f of this.feeds) {
      if (f.streamId === check.streamId && f.role === role && f.state !== 'ended') return { refuse: 'This stream is already being published' };
    }
    const feed = new Feed(this, role, check.streamId, req.connection, Math.max(3000, this.config.live.healthIntervalSeconds * 2000));
    this.feeds.add(feed);
    this.log.info({ streamId: check.streamId, role, remote: req.remoteAddress }, 'live: publisher accepted');
    return { accept: feed };
  }

  /** First media of a feed: the broadcast starts (or continues) and the feed joins it. */
  async join(feed: Feed): Promise<void> {
    let info;
    try {
      info = await this.state.startOrContinue(feed.streamId, feed.role, feed.id, this.sessionId);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'live: could not start the broadcast');
      feed.connection.close('internal error');
      return;
    }
    if (!info) {
      feed.connection.close('the stream may not broadcast');
      return;
    }
    const { instance } = info;
    let broadcast = this.broadcasts.get(instance.id);
    if (!broadcast) {
      let pending = this.joining.get(instance.id);
      if (!pending) {
        const created = new Broadcast(this, instance.id, instance.player_uuid, instance.segment_length);
        pending = created.init().then(() => created);
        this.joining.set(instance.id, pending);
      }
      try {
        broadcast = (await pending) ?? undefined;
      } catch (err) {
        // The store did not answer which parts exist: a part cannot be named safely.
        this.joining.delete(instance.id);
        this.log.error({ err: (err as Error).message, instanceId: instance.id }, 'live: could not read the broadcast output');
        await this.state.releaseFeed(instance.id, feed.role, feed.id).catch(() => {});
        feed.connection.close('internal error');
        return;
      }
      this.joining.delete(instance.id);
      if (broadcast && !this.broadcasts.has(instance.id)) this.broadcasts.set(instance.id, broadcast);
    }
    if (!broadcast || broadcast.closed) {
      feed.connection.close('the broadcast ended');
      return;
    }
    if (info.started) this.log.info({ instanceId: instance.id }, 'live: broadcast started');
    if (feed.state === 'ended') {
      // Left while joining: the broadcast waits for a publisher like after any disconnect.
      await this.state.releaseFeed(instance.id, feed.role, feed.id).catch(() => {});
      broadcast.detach(feed);
      return;
    }
    feed.state = 'joined';
    broadcast.attach(feed);
    const queued = feed.queue;
    feed.queue = [];
    for (const [type, ts, body] of queued) broadcast.onMedia(feed, type, ts, body);
  }

  async feedEnded(feed: Feed, wasJoined: boolean, reason: string): Promise<void> {
    this.feeds.delete(feed);
    this.log.info({ streamId: feed.streamId, role: feed.role, reason }, 'live: publisher left');
    const broadcast = feed.broadcast;
    if (!wasJoined || !broadcast) return;
    await this.state.releaseFeed(broadcast.instanceId, feed.role, feed.id).catch(() => {});
    if (!this.stopping) broadcast.detach(feed);
  }

  forget(broadcast: Broadcast) {
    if (this.broadcasts.get(broadcast.instanceId) === broadcast) this.broadcasts.delete(broadcast.instanceId);
    this.finished.set(broadcast.instanceId, broadcast.stats);
    if (this.finished.size > 100) this.finished.delete(this.finished.keys().next().value!);
  }

  /** A stream was deleted somewhere: publishers of streams that no longer exist are cut at once. */
  private async checkRevoked() {
    const ids = [...new Set([...this.feeds].map((f) => f.streamId))];
    if (ids.length === 0 && this.broadcasts.size === 0) return;
    try {
      const active = await this.state.activeStreams(ids);
      for (const f of this.feeds) if (!active.has(f.streamId)) f.connection.close('stream deleted');
      await Promise.all([...this.broadcasts.values()].map((b) => b.beat()));
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'live: revocation check failed');
    }
  }

  /**
   * Local packager folders of broadcasts no longer on air, left by a process that died (processes
   * sharing the media work dir leave each other's live broadcasts alone).
   */
  private async removeLocalLeftovers() {
    const root = path.join(this.media.workDir, 'live');
    const names = await fsp.readdir(root).catch(() => [] as string[]);
    for (const name of names) {
      if (!/^[0-9a-f-]{1,64}$/i.test(name) || [...this.broadcasts.values()].some((b) => b.playerUuid === name)) continue;
      try {
        if (!(await this.state.onAir(name))) await fsp.rm(path.join(root, name), { recursive: true, force: true });
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'live: could not check a leftover packager folder');
        return;
      }
    }
  }

  /** Ends broadcasts whose ingest died, and cuts publishers of deleted streams. */
  private async sweep() {
    try {
      const ended = await this.state.endStale();
      if (ended) this.log.info({ ended }, 'live: ended broadcasts whose ingest stopped');
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'live: sweep failed');
    }
    await this.checkRevoked();
  }

  // ---- introspection (tests, bench) ----

  /** Wall clock of the first media tag of the instance's active feeds, and the packager CPU so far. */
  stats(instanceId: number): BroadcastStats | null {
    const b = this.broadcasts.get(instanceId);
    if (!b) return this.finished.get(instanceId) ?? null;
    return b.stats;
  }

  /** The instances this process is receiving now. */
  receiving(): number[] {
    return [...this.broadcasts.keys()];
  }
}
