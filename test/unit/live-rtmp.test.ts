import { createHmac, randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AmfError, decodeAmf0, encodeAmf0, encodeAmf0Values } from '../../src/live/amf.ts';
import { handshakeResponse, HANDSHAKE_SIZE } from '../../src/live/rtmp-handshake.ts';
import { RtmpServer, type PublishDecision } from '../../src/live/rtmp-server.ts';

describe('AMF0', () => {
  it('round-trips the values publishers send', () => {
    const values = ['connect', 1, { app: 'live', tcUrl: 'rtmp://h/live', nested: { a: true, b: null } }, null, undefined, [1, 'x'], false];
    expect(decodeAmf0(encodeAmf0Values(values))).toEqual(values);
  });

  it('reads ECMA arrays (onMetaData) and long strings', () => {
    const head = Buffer.from([0x08, 0, 0, 0, 1]);
    const key = Buffer.from([0, 5, ...Buffer.from('width')]);
    const ecma = Buffer.concat([head, key, encodeAmf0(640), Buffer.from([0, 0, 9])]);
    expect(decodeAmf0(ecma)).toEqual([{ width: 640 }]);
    const long = Buffer.concat([Buffer.from([0x0c, 0, 0, 0, 3]), Buffer.from('abc')]);
    expect(decodeAmf0(long)).toEqual(['abc']);
  });

  it('refuses truncated or malformed input instead of over-reading', () => {
    expect(() => decodeAmf0(Buffer.from([0x02, 0x00, 0x10, 0x41]))).toThrow(AmfError);
    expect(() => decodeAmf0(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff]))).toThrow(AmfError);
    expect(() => decodeAmf0(Buffer.from([0x42]))).toThrow(AmfError);
    const deep = Buffer.concat([...Array.from({ length: 40 }, () => Buffer.from([0x03, 0, 1, 0x61])), Buffer.from([0x05])]);
    expect(() => decodeAmf0(deep)).toThrow(AmfError);
  });
});

const FP_KEY = Buffer.from('Genuine Adobe Flash Player 001');
const FMS_KEY_TEXT = Buffer.from('Genuine Adobe Flash Media Server 001');
const FMS_KEY = Buffer.concat([FMS_KEY_TEXT, Buffer.from('f0eec24a8068bee82e00d0d1029e7e576eec5d2d29806fab93b8e636cfeb31ae', 'hex')]);
const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest();
const offsetAt = (b: Buffer, base: number) => ((b[base] + b[base + 1] + b[base + 2] + b[base + 3]) % 728) + base + 4;
const without = (b: Buffer, at: number) => Buffer.concat([b.subarray(0, at), b.subarray(at + 32)]);

describe('RTMP handshake', () => {
  it('echoes C1 in S2 for a plain (version 0) client', () => {
    const c1 = randomBytes(HANDSHAKE_SIZE);
    c1.writeUInt32BE(0, 4);
    const res = handshakeResponse(c1);
    expect(res.length).toBe(1 + 2 * HANDSHAKE_SIZE);
    expect(res[0]).toBe(3);
    expect(res.subarray(1 + HANDSHAKE_SIZE).equals(c1)).toBe(true);
  });

  it('signs S1 and S2 for a client that signed C1 (as Flash-style encoders verify)', () => {
    const c1 = randomBytes(HANDSHAKE_SIZE);
    c1.set([9, 0, 124, 2], 4);
    const at = offsetAt(c1, 8);
    hmac(FP_KEY, without(c1, at)).copy(c1, at);
    const res = handshakeResponse(c1);
    const s1 = res.subarray(1, 1 + HANDSHAKE_SIZE);
    const s2 = res.subarray(1 + HANDSHAKE_SIZE);
    const s1At = offsetAt(s1, 8);
    expect(hmac(FMS_KEY_TEXT, without(s1, s1At)).equals(s1.subarray(s1At, s1At + 32))).toBe(true);
    const key = hmac(FMS_KEY, c1.subarray(at, at + 32));
    expect(hmac(key, s2.subarray(0, HANDSHAKE_SIZE - 32)).equals(s2.subarray(HANDSHAKE_SIZE - 32))).toBe(true);
  });
});

/** One RTMP message as chunks: a first header of format `fmt`, continuations of format 3. */
function chunks(o: { csid: number; fmt: 0 | 1 | 2 | 3; ts?: number; type?: number; streamId?: number; payload: Buffer; chunkSize: number }): Buffer {
  const basic = (fmt: number) =>
    o.csid < 64
      ? Buffer.from([(fmt << 6) | o.csid])
      : o.csid < 320
        ? Buffer.from([fmt << 6, o.csid - 64])
        : Buffer.from([(fmt << 6) | 1, (o.csid - 64) & 0xff, (o.csid - 64) >> 8]);
  const ts = o.ts ?? 0;
  const extended = ts >= 0xffffff;
  const tsField = Buffer.alloc(3);
  tsField.writeUIntBE(extended ? 0xffffff : ts, 0, 3);
  const ext = Buffer.alloc(4);
  ext.writeUInt32BE(ts >>> 0, 0);
  const len = Buffer.alloc(3);
  len.writeUIntBE(o.payload.length, 0, 3);
  const sid = Buffer.alloc(4);
  sid.writeUInt32LE(o.streamId ?? 0, 0);
  const header = [
    Buffer.concat([tsField, len, Buffer.from([o.type ?? 0]), sid]),
    Buffer.concat([tsField, len, Buffer.from([o.type ?? 0])]),
    tsField,
    Buffer.alloc(0),
  ][o.fmt];
  const out: Buffer[] = [];
  for (let off = 0; off < o.payload.length || off === 0; off += o.chunkSize) {
    out.push(off === 0 ? Buffer.concat([basic(o.fmt), header]) : basic(3));
    if (extended) out.push(ext);
    out.push(o.payload.subarray(off, off + o.chunkSize));
    if (o.payload.length === 0) break;
  }
  return Buffer.concat(out);
}

const command = (values: unknown[], chunkSize = 128, csid = 3) => chunks({ csid, fmt: 0, type: 20, payload: encodeAmf0Values(values as never), chunkSize });

describe('RTMP server', () => {
  let server: RtmpServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  async function connect(decide: (key: string) => PublishDecision) {
    server = new RtmpServer({ apps: ['live'], authorize: async (req) => decide(req.key) });
    const port = await server.listen(0, '127.0.0.1');
    const socket = net.connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    socket.on('data', (d) => (received = Buffer.concat([received, d])));
    await new Promise((r) => socket.once('connect', r));
    const c1 = randomBytes(HANDSHAKE_SIZE);
    c1.writeUInt32BE(0, 4);
    socket.write(Buffer.concat([Buffer.from([3]), c1]));
    await waitUntil(() => received.length >= 1 + 2 * HANDSHAKE_SIZE);
    socket.write(received.subarray(1, 1 + HANDSHAKE_SIZE));
    received = received.subarray(1 + 2 * HANDSHAKE_SIZE);
    return { socket, text: () => received.toString('latin1'), closed: new Promise((r) => socket.once('close', r)) };
  }

  async function waitUntil(check: () => boolean, ms = 3000) {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('accepts a publish and delivers media through every chunk header format, extended timestamps and chunk sizes', async () => {
    const media: Array<[number, number, number]> = [];
    let metadata: unknown = null;
    let ended = '';
    const c = await connect(() => ({
      accept: {
        onMetadata: (m) => (metadata = m),
        onMedia: (type, ts, body) => media.push([type, ts, body.length]),
        onEnd: (reason) => (ended = reason),
      },
    }));
    c.socket.write(command(['connect', 1, { app: 'live', tcUrl: 'rtmp://127.0.0.1/live' }]));
    await waitUntil(() => c.text().includes('NetConnection.Connect.Success'));
    c.socket.write(command(['createStream', 2, null]));
    c.socket.write(command(['publish', 3, null, 'the-key?token=1', 'live']));
    await waitUntil(() => c.text().includes('NetStream.Publish.Start'));

    // Small chunks first (128), then a larger chunk size.
    const body = (n: number) => randomBytes(n);
    c.socket.write(
      chunks({ csid: 4, fmt: 0, type: 18, streamId: 1, payload: encodeAmf0Values(['@setDataFrame', 'onMetaData', { width: 640 }]), chunkSize: 128 }),
    );
    c.socket.write(chunks({ csid: 6, fmt: 0, ts: 0, type: 9, streamId: 1, payload: body(300), chunkSize: 128 }));
    const size = Buffer.alloc(4);
    size.writeUInt32BE(4096, 0);
    c.socket.write(chunks({ csid: 2, fmt: 0, type: 1, payload: size, chunkSize: 128 }));
    c.socket.write(chunks({ csid: 6, fmt: 1, ts: 33, type: 9, payload: body(200), chunkSize: 4096 }));
    c.socket.write(chunks({ csid: 6, fmt: 2, ts: 33, payload: body(200), chunkSize: 4096 }));
    c.socket.write(chunks({ csid: 6, fmt: 3, payload: body(200), chunkSize: 4096 }));
    // Extended timestamp, a message longer than the chunk size, and a two-byte chunk stream id.
    c.socket.write(chunks({ csid: 5, fmt: 0, ts: 20_000_000, type: 8, streamId: 1, payload: body(5000), chunkSize: 4096 }));
    c.socket.write(chunks({ csid: 100, fmt: 0, ts: 132, type: 9, streamId: 1, payload: body(10), chunkSize: 4096 }));
    // Byte by byte: the parser waits for whole headers.
    const slow = chunks({ csid: 6, fmt: 2, ts: 34, payload: body(200), chunkSize: 4096 });
    for (const byte of slow) c.socket.write(Buffer.from([byte]));
    await waitUntil(() => media.length === 7);
    expect(metadata).toEqual({ width: 640 });
    expect(media).toEqual([
      [9, 0, 300],
      [9, 33, 200],
      [9, 66, 200],
      [9, 99, 200],
      [8, 20_000_000, 5000],
      [9, 132, 10],
      [9, 133, 200],
    ]);
    c.socket.write(command(['FCUnpublish', 4, null, 'the-key'], 4096));
    await waitUntil(() => ended !== '');
    expect(ended).toBe('unpublished');
    c.socket.destroy();
  });

  it('refuses a publish the ingest does not authorize, with an error status, and closes', async () => {
    let key = '';
    const c = await connect((k) => {
      key = k;
      return { refuse: 'Unknown stream key' };
    });
    c.socket.write(command(['connect', 1, { app: 'live' }]));
    c.socket.write(command(['createStream', 2, null]));
    c.socket.write(command(['publish', 3, null, 'nope', 'live']));
    await c.closed;
    expect(key).toBe('nope');
    expect(c.text()).toContain('NetStream.Publish.BadName');
    expect(c.text()).toContain('Unknown stream key');
  });

  it('rejects an unknown application at connect, and garbage at once', async () => {
    const c = await connect(() => ({ refuse: 'x' }));
    c.socket.write(command(['connect', 1, { app: 'other' }]));
    await c.closed;
    expect(c.text()).toContain('NetConnection.Connect.Rejected');

    const d = await connect(() => ({ refuse: 'x' }));
    d.socket.write(chunks({ csid: 7, fmt: 3, payload: Buffer.alloc(10), chunkSize: 128 }));
    await d.closed;

    // Before publishing, no large messages (an unauthenticated client cannot make it buffer megabytes).
    const e = await connect(() => ({ refuse: 'x' }));
    e.socket.write(chunks({ csid: 3, fmt: 0, type: 20, payload: Buffer.alloc(1_000_000), chunkSize: 128 }).subarray(0, 200));
    await e.closed;
  });
});
