// A client's address as a limit counts it: the connection cap per address (address-connections.ts) and
// the cloud's sign-in throttle (cloud/client-address.ts). IPv4-mapped IPv6 addresses count as their IPv4
// address; an IPv6 address counts as its /64, because one host is usually handed a whole /64 and could
// otherwise take a fresh address for every connection or every try.

import { isIP } from 'node:net';

/** The address without an IPv4-mapped prefix or a zone, lower case. */
export function plainAddress(address: string): string {
  const lower = address.toLowerCase().split('%')[0] as string;
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
}

/** IPv4 addresses as they are; IPv6 ones as their /64 prefix (`2001:db8:0:1::/64`); anything else as given. */
export function addressKey(address: string): string {
  const plain = plainAddress(address);
  if (isIP(plain) !== 6) return plain;
  return `${prefix64Groups(plain).map((group) => group.toString(16)).join(':')}::/64`;
}

/** The first four 16-bit groups of a valid IPv6 address (its /64). */
export function prefix64Groups(address: string): number[] {
  const [head = '', tail] = address.split('::');
  const left = withoutDottedTail(head === '' ? [] : head.split(':'));
  const right = withoutDottedTail(tail === undefined || tail === '' ? [] : tail.split(':'));
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.slice(0, 4).map((group) => Number.parseInt(group, 16));
}

/** Groups with a trailing dotted IPv4 part (`::1.2.3.4`) as the two groups it stands for. */
function withoutDottedTail(groups: string[]): string[] {
  const last = groups.at(-1);
  if (last === undefined || !last.includes('.')) return groups;
  const [a = 0, b = 0, c = 0, d = 0] = last.split('.').map(Number);
  return [...groups.slice(0, -1), ((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
