// Where a hook may send deliveries (../shared/spec/decisions.md "Hooks"). Link-local addresses, cloud metadata
// services and addresses no host has are never targets: a hook is a way to make the server send
// requests, and those would reach its own infrastructure. Loopback and private ranges are refused too
// unless `hooks.allow_private_networks` is set (a receiver on the same machine or network). An IPv6
// address that carries an IPv4 address (NAT64, SIIT, 6to4, Teredo, ...: ip-address.ts) is judged by the
// worse of the two. The URL is checked when a hook is registered, and every address a name resolves to
// is checked again when a delivery connects, so a public name rebound to a private address gets nowhere.

import dns from 'node:dns';
import { embeddedIpv4, formatIpv4, inRange, parseAddress, range, type AddressBytes } from './ip-address.js';

/** Names of cloud metadata services, refused whatever they resolve to. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'metadata.azure.internal', 'instance-data']);

const NEVER = [
  range('169.254.0.0', 16), // link-local, incl. 169.254.169.254 (cloud metadata)
  range('0.0.0.0', 8), // "this network"
  range('224.0.0.0', 4), // multicast
  range('240.0.0.0', 4), // reserved, broadcast
  range('fe80::', 10), // link-local
  range('ff00::', 8), // multicast
  range('::', 128),
  range('fd00:ec2::254', 128), // AWS instance metadata over IPv6
];

const PRIVATE = [
  range('127.0.0.0', 8),
  range('10.0.0.0', 8),
  range('172.16.0.0', 12),
  range('192.168.0.0', 16),
  range('100.64.0.0', 10), // carrier-grade NAT
  range('198.18.0.0', 15), // benchmarking networks
  range('::1', 128),
  range('fc00::', 7), // unique local
  range('fec0::', 10), // site-local (deprecated, still routed by some networks)
  range('64:ff9b:1::', 48), // NAT64 local-use prefix (RFC 8215): a translator inside the operator's network
];

export interface TargetPolicy {
  allowPrivateNetworks: boolean;
}

type Verdict = 'never' | 'private' | undefined;

function verdictOf(address: AddressBytes): Verdict {
  if (NEVER.some((never) => inRange(address, never))) return 'never';
  if (PRIVATE.some((ranged) => inRange(address, ranged))) return 'private';
  return undefined;
}

/**
 * Why an address may not be a hook target, if it may not. Text that is not an IP address (a name) is
 * not refused here: names are checked on the addresses they resolve to. An IPv6 address that carries an
 * IPv4 address (mapped, translated, compatible, NAT64, 6to4, Teredo) is judged by the worse of the two.
 */
export function addressRefusal(address: string, policy: TargetPolicy): string | undefined {
  const bytes = parseAddress(address);
  if (!bytes) return undefined;
  let verdict = verdictOf(bytes);
  let carried: string | undefined;
  for (const ipv4 of embeddedIpv4(bytes)) {
    const inner = verdictOf(ipv4);
    if (inner === 'never' || (inner === 'private' && verdict === undefined)) {
      verdict = inner;
      carried = formatIpv4(ipv4);
    }
  }
  const described = carried ? `${address} (which carries ${carried})` : address;
  if (verdict === 'never') return `${described} is a link-local, metadata or reserved address, never a hook target`;
  if (verdict === 'private' && !policy.allowPrivateNetworks) {
    return `${described} is a loopback or private address; set hooks.allow_private_networks (FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS=true) to deliver to it`;
  }
  return undefined;
}

/** Why a hook URL may not be registered, if it may not: its host as written (names are checked again on delivery). */
export function urlRefusal(url: string, policy: TargetPolicy): string | undefined {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return 'not a URL';
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  if (METADATA_NAMES.has(host)) return `${host} is a cloud metadata service, never a hook target`;
  if (host === 'localhost' || host.endsWith('.localhost')) return addressRefusal('127.0.0.1', policy);
  return addressRefusal(host, policy);
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/** Resolves a name to all its addresses: dns.lookup (the system resolver) unless a test says otherwise. */
export type Resolver = (hostname: string, options: dns.LookupAllOptions, callback: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, options, callback) => dns.lookup(hostname, options, callback);

/**
 * A dns.lookup that refuses the addresses a hook may not reach, for the delivery client. The check
 * happens at connection time, on the addresses this one lookup answered, and the connection is made to
 * one of those very addresses (Node connects to what its `lookup` option hands back and resolves
 * nothing else), so a name rebound to a private address between a check and a connect has no gap to
 * slip through: there is no second resolution.
 */
export function guardedLookup(policy: TargetPolicy, resolve: Resolver = systemResolver) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    if (METADATA_NAMES.has(hostname.toLowerCase().replace(/\.$/, ''))) {
      callback(refusedError(`${hostname} is a cloud metadata service`), '', 0);
      return;
    }
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, '', 0);
        return;
      }
      if (addresses.length === 0) {
        callback(refusedError(`${hostname} resolves to no address`), '', 0);
        return;
      }
      for (const { address } of addresses) {
        const refusal = addressRefusal(address, policy);
        if (refusal) {
          callback(refusedError(`${hostname} resolves to ${refusal}`), '', 0);
          return;
        }
      }
      if (options.all) callback(null, addresses);
      else callback(null, (addresses[0] as dns.LookupAddress).address, (addresses[0] as dns.LookupAddress).family);
    });
  };
}

function refusedError(message: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message);
  error.code = 'EHOOKTARGET';
  return error;
}
