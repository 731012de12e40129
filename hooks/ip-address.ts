// IP addresses as bytes, for the hook target rules: every textual form of an address (compressed
// IPv6, a dotted-quad tail, upper case, leading zeros in a group, a zone id) comes down to the same 4 or
// 16 bytes, and ranges are compared on bytes. The IPv4 addresses some IPv6 ranges carry inside them are
// taken out, because a packet sent to such an address can end up at that IPv4 address: through a
// NAT64 or SIIT translator, a 6to4 relay, a Teredo server, or a host that maps them itself.

/** 4 bytes for IPv4, 16 for IPv6. */
export type AddressBytes = Uint8Array;

export interface Range {
  bytes: AddressBytes;
  prefixBits: number;
}

/** The address `text` names, or undefined when it is not an IP address (a name, or garbage). */
export function parseAddress(text: string): AddressBytes | undefined {
  return text.includes(':') ? parseIpv6(text) : parseIpv4(text);
}

/** Dotted decimal, four parts of 0 to 255 (the form resolvers and the URL parser give). */
function parseIpv4(text: string): AddressBytes | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  const bytes = new Uint8Array(4);
  for (const [index, part] of parts.entries()) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    bytes[index] = Number(part);
  }
  return bytes;
}

function parseIpv6(text: string): AddressBytes | undefined {
  const zone = text.indexOf('%'); // fe80::1%eth0: the zone says which interface, not which address
  const address = zone === -1 ? text : text.slice(0, zone);
  const halves = address.split('::');
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0] as string, halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1] as string, true) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  for (const [index, group] of groups.entries()) {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  }
  return bytes;
}

/** The 16-bit groups of one side of `::`; a dotted quad may end the last side, as two groups. */
function groupsOf(side: string, last: boolean): number[] | undefined {
  if (side === '') return [];
  const parts = side.split(':');
  const groups: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (last && index === parts.length - 1 && part.includes('.')) {
      const ipv4 = parseIpv4(part);
      if (!ipv4) return undefined;
      groups.push((ipv4[0] as number) << 8 | (ipv4[1] as number), (ipv4[2] as number) << 8 | (ipv4[3] as number));
    } else {
      if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return undefined;
      groups.push(Number.parseInt(part, 16));
    }
  }
  return groups;
}

export function range(text: string, prefixBits: number): Range {
  const bytes = parseAddress(text);
  if (!bytes) throw new Error(`not an address: ${text}`);
  return { bytes, prefixBits };
}

export function inRange(address: AddressBytes, { bytes, prefixBits }: Range): boolean {
  if (address.length !== bytes.length) return false;
  const whole = prefixBits >> 3;
  for (let index = 0; index < whole; index += 1) if (address[index] !== bytes[index]) return false;
  const rest = prefixBits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((address[whole] as number) & mask) === ((bytes[whole] as number) & mask);
}

/** How an IPv6 range carries an IPv4 address: where its 4 bytes are, and whether they are inverted. */
interface Embedding {
  range: Range;
  at: number;
  inverted?: boolean;
  /** Addresses of the range that carry none (`::` and `::1` in the IPv4-compatible range). */
  except?: (address: AddressBytes) => boolean;
}

const EMBEDDINGS: Embedding[] = [
  { range: range('::ffff:0:0', 96), at: 12 }, // IPv4-mapped
  { range: range('::ffff:0:0:0', 96), at: 12 }, // SIIT, IPv4-translated (RFC 6145)
  { range: range('::', 96), at: 12, except: (address) => address.subarray(0, 15).every((byte) => byte === 0) && (address[15] as number) <= 1 }, // IPv4-compatible (deprecated)
  { range: range('64:ff9b::', 96), at: 12 }, // NAT64, well-known prefix (RFC 6052)
  { range: range('64:ff9b:1::', 48), at: 12 }, // NAT64, local-use prefix (RFC 8215), in its /96 form
  { range: range('2002::', 16), at: 2 }, // 6to4: the relay's IPv4 address
  { range: range('2001::', 32), at: 4 }, // Teredo: the server's IPv4 address
  { range: range('2001::', 32), at: 12, inverted: true }, // Teredo: the client's, bits inverted
];

/** The IPv4 addresses an IPv6 address carries, as the ranges above place them. */
export function embeddedIpv4(address: AddressBytes): AddressBytes[] {
  if (address.length !== 16) return [];
  const found: AddressBytes[] = [];
  for (const { range: carrier, at, inverted, except } of EMBEDDINGS) {
    if (!inRange(address, carrier) || except?.(address)) continue;
    const ipv4 = address.slice(at, at + 4);
    if (inverted) for (let index = 0; index < 4; index += 1) ipv4[index] = ~(ipv4[index] as number) & 0xff;
    found.push(ipv4);
  }
  return found;
}

export function formatIpv4(bytes: AddressBytes): string {
  return [...bytes].join('.');
}
