import fs from 'node:fs';
import ipaddr from 'ipaddr.js';
import { Reader, type Response } from 'maxmind';

/** What country databases in the MaxMind format hold: GeoLite2/GeoIP2 (`country.iso_code`) or ip-location-db (`country_code`). */
interface CountryRecord {
  country?: { iso_code?: string };
  registered_country?: { iso_code?: string };
  country_code?: string;
}

/**
 * The country of a viewer's address, from the GeoIP database GEOIP_DATABASE names (a `.mmdb` file),
 * read once into memory. Only the two-letter code is kept of the address (docs/analytics.md); without
 * a database every country is unknown.
 */
export class Countries {
  private readonly reader: Reader<Response> | null;

  constructor(file?: string) {
    if (!file) {
      this.reader = null;
      return;
    }
    let buffer: Buffer;
    try {
      buffer = fs.readFileSync(file);
    } catch (err) {
      throw new Error(`GEOIP_DATABASE: cannot read ${file} (${(err as Error).message})`);
    }
    try {
      this.reader = new Reader<Response>(buffer);
    } catch (err) {
      throw new Error(`GEOIP_DATABASE: ${file} is not a MaxMind database (${(err as Error).message})`);
    }
  }

  /** The ISO 3166 code (upper case) of the address's country; null when unknown or without a database. */
  of(address: string): string | null {
    if (!this.reader || !ipaddr.isValid(address)) return null;
    // An IPv4 client on a dual-stack socket is reported as ::ffff:a.b.c.d.
    const ip = ipaddr.process(address);
    // An IPv4-only database walked with an IPv6 address would answer some country: unknown instead.
    if (ip.kind() === 'ipv6' && this.reader.metadata.ipVersion === 4) return null;
    let record: CountryRecord | null;
    try {
      record = this.reader.get(ip.toString()) as CountryRecord | null;
    } catch {
      // An address the database cannot look up is a country unknown, not a failed report.
      return null;
    }
    const code = record?.country?.iso_code ?? record?.country_code ?? record?.registered_country?.iso_code;
    return typeof code === 'string' && /^[A-Za-z]{2}$/.test(code) ? code.toUpperCase() : null;
  }
}
