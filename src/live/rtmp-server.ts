import net from 'node:net';
import { AmfError, decodeAmf0, encodeAmf0Values, type AmfObject, type AmfValue } from './amf.ts';
import { HANDSHAKE_SIZE, handshakeResponse } from './rtmp-handshake.ts';
import { listenOn } from '../net/listen.ts';

/**
 * A small RTMP server that accepts publishers (encoders such as OBS or ffmpeg) and hands their
 * media to the ingest. It speaks what publishing needs: handshake, chunk streams, connect,
 * createStream, publish, audio/video/data messages. Playback over RTMP is refused: viewers use HLS.
 */

export type FeedRole = 'primary' | 'backup';

/** Receives one accepted publish. */
export interface PublishSink {
  onMetadata(metadata: AmfObject): void;
  /** type 8 = audio, 9 = video; timestamp in milliseconds; payload is the FLV tag body. */
  onMedia(type: 8 | 9, timestamp: number, payload: Buffer): void;
  /** The publisher stopped or the connection ended (called once). */
  onEnd(reason: string): void;
}

export interface PublishRequest {
  /** The application of the RTMP URL (`live`, `backup`, …). */
  app: string;
  /** The stream name: the stream key. */
  key: string;
  remoteAddress: string;
  connection: RtmpConnection;
}

export type PublishDecision = { accept: PublishSink } | { refuse: string };

export interface RtmpServerOptions {
  /** Applications a client may connect to; others are rejected at connect. */
  apps: string[];
  authorize(request: PublishRequest): Promise<PublishDecision>;
  log?: { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void };
  /** Largest message accepted (a keyframe of a high bit rate stream is well below). */
  maxMessageBytes?: number;
  /** A connection that has not started publishing after this long is closed. */
  publishTimeoutMs?: number;
  maxConnections?: number;
}

const OUT_CHUNK_SIZE = 4096;
const MAX_CHUNK_STREAMS = 64;
const MAX_COMMAND_BYTES = 64 * 1024;
const WINDOW_ACK_SIZE = 5_000_000;
const PUBLISH_STREAM_ID = 1;

interface ChunkStream {
  timestamp: number;
  delta: number;
  length: number;
  type: number;
  streamId: number;
  extended: boolean;
  parts: Buffer[];
  received: number;
}

/** A string or number sent in an AMF command, as text; anything else (a missing value, an object) is empty. */
const amfText = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');
export class RtmpConnection {
  private state: 'c0c1' | 'c2' | 'chunks' | 'closed' = 'c0c1';
  private pending: Buffer = Buffer.alloc(0);
  private inChunkSize = 128;
  private readonly streams = new Map<number, ChunkStream>();
  private bytesIn = 0;
  /** Bytes of messages not yet complete, over all chunk streams. */
  private buffered = 0;
  private lastAck = 0;
  private peerWindow = 0;
  private app = '';
  private sink: PublishSink | null = null;
  private publishing: 'no' | 'pending' | 'yes' = 'no';
  /** Media that arrived while the publish was being authorized. */
  private early: Array<() => void> = [];
  private readonly maxMessageBytes: number;
  private publishTimer: NodeJS.Timeout | null = null;
  private ended = false;
  readonly remoteAddress: string;

  constructor(
    private readonly socket: net.Socket,
    private readonly options: RtmpServerOptions,
  ) {
    this.remoteAddress = socket.remoteAddress ?? '';
    this.maxMessageBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
    socket.setNoDelay(true);
    socket.setTimeout(30_000, () => this.close('idle'));
    socket.on('data', (data) => this.onData(data));
    socket.on('error', () => this.close('socket error'));
    socket.on('close', () => this.close('disconnected'));
    this.publishTimer = setTimeout(() => {
      if (this.publishing === 'no') this.close('did not publish in time');
    }, options.publishTimeoutMs ?? 20_000);
    this.publishTimer.unref();
  }

  /** Ends the connection; a publisher's sink learns why. */
  close(reason: string): void {
    if (this.publishTimer) clearTimeout(this.publishTimer);
    if (this.state !== 'closed') {
      this.state = 'closed';
      this.socket.destroy();
    }
    this.endPublish(reason);
  }

  private endPublish(reason: string) {
    if (this.ended) return;
    if (this.publishing === 'yes' && this.sink) {
      this.ended = true;
      const sink = this.sink;
      this.sink = null;
      sink.onEnd(reason);
    } else if (this.state === 'closed') {
      this.ended = true;
    }
  }

  private onData(data: Buffer) {
    if (this.state === 'closed') return;
    this.bytesIn += data.length;
    this.pending = this.pending.length ? Buffer.concat([this.pending, data]) : data;
    try {
      this.process();
    } catch (err) {
      this.options.log?.warn({ err: (err as Error).message, remote: this.remoteAddress }, 'rtmp: protocol error');
      this.close('protocol error');
      return;
    }
    if (this.peerWindow > 0 && this.bytesIn - this.lastAck >= this.peerWindow) {
      this.lastAck = this.bytesIn;
      const b = Buffer.alloc(4);
      b.writeUInt32BE(this.bytesIn >>> 0, 0);
      this.sendMessage(2, 3, 0, 0, b);
    }
  }

  private process() {
    for (;;) {
      if (this.state === 'c0c1') {
        if (this.pending.length < 1 + HANDSHAKE_SIZE) return;
        if (this.pending[0] !== 3) throw new Error(`unsupported RTMP version ${this.pending[0]}`);
        const c1 = Buffer.from(this.pending.subarray(1, 1 + HANDSHAKE_SIZE));
        this.pending = this.pending.subarray(1 + HANDSHAKE_SIZE);
        this.socket.write(handshakeResponse(c1));
        this.state = 'c2';
      } else if (this.state === 'c2') {
        if (this.pending.length < HANDSHAKE_SIZE) return;
        this.pending = this.pending.subarray(HANDSHAKE_SIZE);
        this.state = 'chunks';
      } else if (this.state === 'chunks') {
        if (!this.readChunk()) return;
      } else {
        return;
      }
    }
  }

  /** Reads one chunk from `pending`; false when more bytes are needed. */
  private readChunk(): boolean {
    const buf = this.pending;
    if (buf.length < 1) return false;
    let pos = 0;
    const fmt = buf[0] >> 6;
    let csid = buf[0] & 0x3f;
    pos = 1;
    if (csid === 0) {
      if (buf.length < 2) return false;
      csid = buf[1] + 64;
      pos = 2;
    } else if (csid === 1) {
      if (buf.length < 3) return false;
      csid = buf[1] + buf[2] * 256 + 64;
      pos = 3;
    }
    const headerLength = [11, 7, 3, 0][fmt];
    if (buf.length < pos + headerLength) return false;
    let cs = this.streams.get(csid);
    if (!cs) {
      // A chunk stream starts with a header that gives the message length and type (format 0, or 1).
      if (fmt >= 2) throw new Error(`chunk stream ${csid} starts without a message header`);
      if (this.streams.size >= MAX_CHUNK_STREAMS) throw new Error('too many chunk streams');
      cs = { timestamp: 0, delta: 0, length: 0, type: 0, streamId: 0, extended: false, parts: [], received: 0 };
    }
    const startsMessage = cs.received === 0;
    let tsField = 0;
    let length = cs.length;
    let type = cs.type;
    let streamId = cs.streamId;
    if (fmt <= 2) tsField = buf.readUIntBE(pos, 3);
    if (fmt <= 1) {
      length = buf.readUIntBE(pos + 3, 3);
      type = buf[pos + 6];
    }
    if (fmt === 0) streamId = buf.readUInt32LE(pos + 7);
    pos += headerLength;
    const extended = fmt <= 2 ? tsField === 0xffffff : cs.extended;
    let extendedValue = 0;
    if (extended) {
      if (buf.length < pos + 4) return false;
      extendedValue = buf.readUInt32BE(pos);
      pos += 4;
    }
    // Before a publisher says `publish`, only small command messages make sense.
    if (length > (this.publishing !== 'no' ? this.maxMessageBytes : MAX_COMMAND_BYTES)) throw new Error(`message of ${length} bytes is too large`);
    const take = Math.min(this.inChunkSize, length - (startsMessage ? 0 : cs.received));
    if (buf.length < pos + take) return false;

    // The whole chunk is here: commit the header.
    if (fmt <= 2) cs.extended = extended;
    if (startsMessage) {
      if (fmt === 0) {
        cs.timestamp = extended ? extendedValue : tsField;
        cs.delta = 0;
      } else if (fmt === 1 || fmt === 2) {
        cs.delta = extended ? extendedValue : tsField;
        cs.timestamp += cs.delta;
      } else {
        cs.timestamp += cs.delta;
      }
      cs.length = length;
      cs.type = type;
      cs.streamId = streamId;
    }
    this.streams.set(csid, cs);
    if (take > 0) cs.parts.push(Buffer.from(buf.subarray(pos, pos + take)));
    cs.received += take;
    this.buffered += take;
    if (this.buffered > 2 * this.maxMessageBytes) throw new Error('too much unfinished message data');
    this.pending = buf.subarray(pos + take);
    if (cs.received >= cs.length) {
      const payload = cs.parts.length === 1 ? cs.parts[0] : Buffer.concat(cs.parts);
      this.buffered -= cs.received;
      cs.parts = [];
      cs.received = 0;
      this.onMessage(cs.type, cs.timestamp >>> 0, cs.streamId, payload);
    }
    return true;
  }

  private onMessage(type: number, timestamp: number, _streamId: number, payload: Buffer) {
    switch (type) {
      case 1: {
        if (payload.length < 4) throw new Error('short set chunk size');
        const size = payload.readUInt32BE(0) & 0x7fffffff;
        if (size < 1) throw new Error('invalid chunk size');
        this.inChunkSize = Math.min(size, 0xffffff);
        return;
      }
      case 2: {
        if (payload.length >= 4) {
          const cs = this.streams.get(payload.readUInt32BE(0));
          if (cs) {
            this.buffered -= cs.received;
            cs.parts = [];
            cs.received = 0;
          }
        }
        return;
      }
      case 4: {
        // User control: answer a ping request.
        if (payload.length >= 6 && payload.readUInt16BE(0) === 6) {
          const b = Buffer.alloc(6);
          b.writeUInt16BE(7, 0);
          payload.copy(b, 2, 2, 6);
          this.sendMessage(2, 4, 0, 0, b);
        }
        return;
      }
      case 5:
        if (payload.length >= 4) this.peerWindow = payload.readUInt32BE(0);
        return;
      case 8:
      case 9:
        this.media(type, timestamp, payload);
        return;
      case 15:
        this.data(payload.subarray(1));
        return;
      case 18:
        this.data(payload);
        return;
      case 17:
        this.command(payload.subarray(1));
        return;
      case 20:
        this.command(payload);
        return;
      default:
        return;
    }
  }

  private media(type: 8 | 9, timestamp: number, payload: Buffer) {
    if (payload.length === 0) return;
    if (this.publishing === 'yes' && this.sink) this.sink.onMedia(type, timestamp, payload);
    else if (this.publishing === 'pending' && this.early.length < 2000) this.early.push(() => this.sink?.onMedia(type, timestamp, payload));
  }

  private data(payload: Buffer) {
    let values: AmfValue[];
    try {
      values = decodeAmf0(payload);
    } catch (err) {
      if (err instanceof AmfError) return;
      throw err;
    }
    let metadata: AmfValue = undefined;
    if (values[0] === '@setDataFrame' && values[1] === 'onMetaData') metadata = values[2];
    else if (values[0] === 'onMetaData') metadata = values[1];
    if (!metadata || typeof metadata !== 'object' || Array.isArray(metadata) || metadata instanceof Date) return;
    const obj = metadata;
    if (this.publishing === 'yes' && this.sink) this.sink.onMetadata(obj);
    else if (this.publishing === 'pending') this.early.push(() => this.sink?.onMetadata(obj));
  }

  private command(payload: Buffer) {
    const values = decodeAmf0(payload);
    const name = values[0];
    const txid = typeof values[1] === 'number' ? values[1] : 0;
    if (typeof name !== 'string') return;
    switch (name) {
      case 'connect': {
        const cmd = (values[2] && typeof values[2] === 'object' ? values[2] : {}) as AmfObject;
        const app = amfText(cmd.app).split('?')[0].replace(/\/+$/, '');
        this.app = app;
        if (!this.options.apps.includes(app)) {
          this.sendCommand(0, ['_error', txid, null, { level: 'error', code: 'NetConnection.Connect.Rejected', description: `Unknown application "${app}"` }]);
          this.endSoon('unknown application');
          return;
        }
        const win = Buffer.alloc(4);
        win.writeUInt32BE(WINDOW_ACK_SIZE, 0);
        this.sendMessage(2, 5, 0, 0, win);
        const bw = Buffer.alloc(5);
        bw.writeUInt32BE(WINDOW_ACK_SIZE, 0);
        bw[4] = 2;
        this.sendMessage(2, 6, 0, 0, bw);
        const cs = Buffer.alloc(4);
        cs.writeUInt32BE(OUT_CHUNK_SIZE, 0);
        this.sendMessage(2, 1, 0, 0, cs);
        this.outChunkSize = OUT_CHUNK_SIZE;
        this.sendCommand(0, [
          '_result',
          txid,
          { fmsVer: 'FMS/3,0,1,123', capabilities: 31 },
          {
            level: 'status',
            code: 'NetConnection.Connect.Success',
            description: 'Connection succeeded.',
            objectEncoding: typeof cmd.objectEncoding === 'number' ? cmd.objectEncoding : 0,
          },
        ]);
        return;
      }
      case 'releaseStream':
      case 'FCPublish':
      case 'getStreamLength':
        this.sendCommand(0, ['_result', txid, null, undefined]);
        return;
      case 'createStream':
        this.sendCommand(0, ['_result', txid, null, PUBLISH_STREAM_ID]);
        return;
      case 'publish': {
        if (this.publishing !== 'no') return;
        const key = amfText(values[3]).split('?')[0];
        this.publishing = 'pending';
        if (this.publishTimer) clearTimeout(this.publishTimer);
        this.options.authorize({ app: this.app, key, remoteAddress: this.remoteAddress, connection: this }).then(
          (decision) => this.publishDecided(key, decision),
          (err) => {
            this.options.log?.warn({ err: (err as Error).message }, 'rtmp: publish authorization failed');
            this.publishDecided(key, { refuse: 'The service could not accept the stream' });
          },
        );
        return;
      }
      case 'play':
        this.sendStatus('error', 'NetStream.Play.Failed', 'Playback over RTMP is not offered; watch over HLS');
        this.endSoon('play refused');
        return;
      case 'FCUnpublish':
      case 'deleteStream':
      case 'closeStream':
        this.endPublish('unpublished');
        return;
      default:
        return;
    }
  }

  private publishDecided(key: string, decision: PublishDecision) {
    if (this.state === 'closed') {
      // The publisher left while we were deciding: tell an accepted sink at once.
      if ('accept' in decision) decision.accept.onEnd('disconnected');
      return;
    }
    if ('refuse' in decision) {
      this.publishing = 'no';
      this.early = [];
      this.sendStatus('error', 'NetStream.Publish.BadName', decision.refuse);
      this.endSoon('publish refused');
      return;
    }
    this.sink = decision.accept;
    this.publishing = 'yes';
    const begin = Buffer.alloc(6);
    begin.writeUInt16BE(0, 0);
    begin.writeUInt32BE(PUBLISH_STREAM_ID, 2);
    this.sendMessage(2, 4, 0, 0, begin);
    this.sendStatus('status', 'NetStream.Publish.Start', `${key.slice(0, 4)}… is now published.`);
    const early = this.early;
    this.early = [];
    for (const deliver of early) deliver();
  }

  /** Sends what is queued, then closes. */
  private endSoon(reason: string) {
    if (this.state === 'closed') return;
    this.socket.end(() => this.close(reason));
    setTimeout(() => this.close(reason), 500).unref();
  }

  private sendStatus(level: string, code: string, description: string) {
    this.sendCommand(PUBLISH_STREAM_ID, ['onStatus', 0, null, { level, code, description }], 5);
  }

  private sendCommand(streamId: number, values: AmfValue[], csid = 3) {
    this.sendMessage(csid, 20, 0, streamId, encodeAmf0Values(values));
  }

  private outChunkSize = 128;

  private sendMessage(csid: number, type: number, timestamp: number, streamId: number, payload: Buffer) {
    if (this.state === 'closed' || this.socket.destroyed || !this.socket.writable) return;
    const parts: Buffer[] = [];
    const header = Buffer.alloc(12);
    header[0] = csid & 0x3f;
    header.writeUIntBE(Math.min(timestamp, 0xffffff), 1, 3);
    header.writeUIntBE(payload.length, 4, 3);
    header[7] = type;
    header.writeUInt32LE(streamId, 8);
    parts.push(header);
    for (let off = 0; off < payload.length; off += this.outChunkSize) {
      if (off > 0) parts.push(Buffer.from([0xc0 | (csid & 0x3f)]));
      parts.push(payload.subarray(off, off + this.outChunkSize));
    }
    this.socket.write(Buffer.concat(parts));
  }
}

export class RtmpServer {
  private readonly server: net.Server;
  private readonly connections = new Set<RtmpConnection>();

  constructor(options: RtmpServerOptions) {
    this.server = net.createServer((socket) => {
      if (this.connections.size >= (options.maxConnections ?? 1000)) {
        socket.destroy();
        return;
      }
      const conn = new RtmpConnection(socket, options);
      this.connections.add(conn);
      socket.on('close', () => this.connections.delete(conn));
    });
  }

  async listen(port: number, host: string): Promise<number> {
    await listenOn(this.server, { port, host });
    return (this.server.address() as net.AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const c of this.connections) c.close('server stopping');
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
