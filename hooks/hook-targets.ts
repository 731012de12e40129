// Where a hook may send deliveries (decisions.md "Hooks"). Link-local addresses, cloud metadata
// services and addresses no host has are never targets: a hook is a way to make the server send
// requests, and those would reach its own infrastructure. Loopback and private ranges are refused too
// unless `hooks.allow_private_networks` is set (a receiver on the same machine or network). The URL is
// checked when a hook is registered, and every address a name resolves to is checked again when a
// delivery connects, so a public name rebound to a private address gets nowhere.

import dns from 'node:dns';
import { BlockList, isIP } from 'node:net';

/** Names of cloud metadata services, refused whatever they resolve to. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata', 'metadata.azure.internal', 'instance-data']);

const NEVER = new BlockList();
NEVER.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local, incl. 169.254.169.254 (cloud metadata)
NEVER.addSubnet('0.0.0.0', 8, 'ipv4'); // "this network"
NEVER.addSubnet('224.0.0.0', 4, 'ipv4'); // multicast
NEVER.addSubnet('240.0.0.0', 4, 'ipv4'); // reserved, broadcast
NEVER.addSubnet('fe80::', 10, 'ipv6'); // link-local
NEVER.addSubnet('ff00::', 8, 'ipv6'); // multicast
NEVER.addAddress('::', 'ipv6');
NEVER.addAddress('fd00:ec2::254', 'ipv6'); // AWS instance metadata over IPv6

const PRIVATE = new BlockList();
PRIVATE.addSubnet('127.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('10.0.0.0', 8, 'ipv4');
PRIVATE.addSubnet('172.16.0.0', 12, 'ipv4');
PRIVATE.addSubnet('192.168.0.0', 16, 'ipv4');
PRIVATE.addSubnet('100.64.0.0', 10, 'ipv4'); // carrier-grade NAT
PRIVATE.addSubnet('198.18.0.0', 15, 'ipv4'); // benchmarking networks
PRIVATE.addAddress('::1', 'ipv6');
PRIVATE.addSubnet('fc00::', 7, 'ipv6'); // unique local

export interface TargetPolicy {
  allowPrivateNetworks: boolean;
}

/** Why an address may not be a hook target, if it may not. */
export function addressRefusal(address: string, policy: TargetPolicy): string | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
  const [plain, type] = mapped ? [mapped, 'ipv4' as const] : [address, family === 4 ? 'ipv4' as const : 'ipv6' as const];
  if (NEVER.check(plain, type)) return `${address} is a link-local, metadata or reserved address, never a hook target`;
  if (!policy.allowPrivateNetworks && PRIVATE.check(plain, type)) {
    return `${address} is a loopback or private address; set hooks.allow_private_networks (FOLIO_HOOKS_ALLOW_PRIVATE_NETWORKS=true) to deliver to it`;
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

/**
 * A dns.lookup that refuses the addresses a hook may not reach, for the delivery client: the check
 * happens at connection time, on the address actually used.
 */
export function guardedLookup(policy: TargetPolicy) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    if (METADATA_NAMES.has(hostname.toLowerCase())) {
      callback(refusedError(`${hostname} is a cloud metadata service`), '', 0);
      return;
    }
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, '', 0);
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
      else callback(null, addresses[0]?.address ?? '', addresses[0]?.family ?? 4);
    });
  };
}

function refusedError(message: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message);
  error.code = 'EHOOKTARGET';
  return error;
}
