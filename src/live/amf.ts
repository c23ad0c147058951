/**
 * AMF0, the encoding of RTMP commands and stream metadata (only what publishers send and what the
 * ingest answers). Decoding is defensive: malformed input throws AmfError, never loops or over-reads.
 */

export class AmfError extends Error {}

export type AmfValue = number | boolean | string | null | undefined | Date | AmfObject | AmfValue[];
export interface AmfObject {
  [key: string]: AmfValue;
}

const MAX_DEPTH = 32;

export class AmfReader {
  offset = 0;
  constructor(private readonly buf: Buffer) {}

  get done(): boolean {
    return this.offset >= this.buf.length;
  }

  private need(n: number) {
    if (this.offset + n > this.buf.length) throw new AmfError('AMF0 value runs past the end of the message');
  }

  private u8(): number {
    this.need(1);
    return this.buf[this.offset++];
  }

  private u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  private u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  private utf8(length: number): string {
    this.need(length);
    const s = this.buf.toString('utf8', this.offset, this.offset + length);
    this.offset += length;
    return s;
  }

  private properties(depth: number, into: AmfObject): AmfObject {
    for (;;) {
      const key = this.utf8(this.u16());
      if (key === '') {
        this.need(1);
        if (this.buf[this.offset] === 0x09) {
          this.offset++;
          return into;
        }
      }
      const value = this.value(depth + 1);
      if (key !== '__proto__') into[key] = value;
    }
  }

  value(depth = 0): AmfValue {
    if (depth > MAX_DEPTH) throw new AmfError('AMF0 value nested too deeply');
    const marker = this.u8();
    switch (marker) {
      case 0x00: {
        this.need(8);
        const v = this.buf.readDoubleBE(this.offset);
        this.offset += 8;
        return v;
      }
      case 0x01:
        return this.u8() !== 0;
      case 0x02:
        return this.utf8(this.u16());
      case 0x03:
        return this.properties(depth, {});
      case 0x05:
        return null;
      case 0x06:
        return undefined;
      case 0x07: // reference: not resolved, rarely sent by publishers
        this.u16();
        return null;
      case 0x08: // ECMA array: a count (advisory) then properties
        this.u32();
        return this.properties(depth, {});
      case 0x0a: {
        const count = this.u32();
        if (count > this.buf.length - this.offset) throw new AmfError('AMF0 strict array longer than the message');
        const out: AmfValue[] = [];
        for (let i = 0; i < count; i++) out.push(this.value(depth + 1));
        return out;
      }
      case 0x0b: {
        this.need(10);
        const ms = this.buf.readDoubleBE(this.offset);
        this.offset += 10;
        return new Date(ms);
      }
      case 0x0c:
        return this.utf8(this.u32());
      case 0x0d: // unsupported
        return undefined;
      case 0x10: {
        // typed object: class name then properties
        this.utf8(this.u16());
        return this.properties(depth, {});
      }
      default:
        throw new AmfError(`unsupported AMF0 marker 0x${marker.toString(16)}`);
    }
  }

  /** Every value in the message. */
  all(): AmfValue[] {
    const out: AmfValue[] = [];
    while (!this.done) out.push(this.value());
    return out;
  }
}

export function decodeAmf0(buf: Buffer): AmfValue[] {
  return new AmfReader(buf).all();
}

function encodeString(s: string): Buffer {
  const body = Buffer.from(s, 'utf8');
  if (body.length > 0xffff) {
    const head = Buffer.alloc(5);
    head[0] = 0x0c;
    head.writeUInt32BE(body.length, 1);
    return Buffer.concat([head, body]);
  }
  const head = Buffer.alloc(3);
  head[0] = 0x02;
  head.writeUInt16BE(body.length, 1);
  return Buffer.concat([head, body]);
}

function encodeKey(key: string): Buffer {
  const body = Buffer.from(key, 'utf8');
  const head = Buffer.alloc(2);
  head.writeUInt16BE(body.length, 0);
  return Buffer.concat([head, body]);
}

export function encodeAmf0(value: AmfValue): Buffer {
  if (value === null) return Buffer.from([0x05]);
  if (value === undefined) return Buffer.from([0x06]);
  if (typeof value === 'number') {
    const b = Buffer.alloc(9);
    b[0] = 0x00;
    b.writeDoubleBE(value, 1);
    return b;
  }
  if (typeof value === 'boolean') return Buffer.from([0x01, value ? 1 : 0]);
  if (typeof value === 'string') return encodeString(value);
  if (value instanceof Date) {
    const b = Buffer.alloc(11);
    b[0] = 0x0b;
    b.writeDoubleBE(value.getTime(), 1);
    return b;
  }
  if (Array.isArray(value)) {
    const head = Buffer.alloc(5);
    head[0] = 0x0a;
    head.writeUInt32BE(value.length, 1);
    return Buffer.concat([head, ...value.map(encodeAmf0)]);
  }
  const parts: Buffer[] = [Buffer.from([0x03])];
  for (const [k, v] of Object.entries(value)) parts.push(encodeKey(k), encodeAmf0(v));
  parts.push(Buffer.from([0x00, 0x00, 0x09]));
  return Buffer.concat(parts);
}

export function encodeAmf0Values(values: AmfValue[]): Buffer {
  return Buffer.concat(values.map(encodeAmf0));
}
