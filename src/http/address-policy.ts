/**
 * Which network addresses Strata may call out to. Public addresses always; loopback and private ranges
 * only when the operator allows them (STRATA_OUTBOUND_ALLOW); link-local, cloud metadata, unspecified,
 * multicast and reserved addresses never, since nothing a project configures has a reason to live there
 * and a metadata service hands out the host's cloud credentials.
 */
import { BlockList, isIPv6 } from 'node:net';

export const ADDRESS_ALLOWANCES = ['loopback', 'private'] as const;
export type AddressAllowance = (typeof ADDRESS_ALLOWANCES)[number];

export type AddressKind = 'forbidden' | AddressAllowance | 'public';

type Range = [address: string, prefix: number];

function blockList(ranges: readonly Range[]): BlockList {
  const list = new BlockList();
  for (const [address, prefix] of ranges) list.addSubnet(address, prefix, isIPv6(address) ? 'ipv6' : 'ipv4');
  return list;
}

const FORBIDDEN = blockList([
  ['0.0.0.0', 8], // "this network": 0.0.0.0 reaches the local host on Linux
  ['169.254.0.0', 16], // link-local, with the metadata service of most clouds at 169.254.169.254
  ['100.100.100.200', 32], // Alibaba Cloud's metadata service (inside the shared range below)
  ['192.0.0.0', 24], // IETF protocol assignments
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
  ['::', 128], // unspecified: reaches the local host
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['fd00:ec2::254', 128], // AWS's metadata service over IPv6 (inside the unique local range below)
  ['ff00::', 8], // multicast
]);

const LOOPBACK = blockList([
  ['127.0.0.0', 8],
  ['::1', 128],
]);

const PRIVATE = blockList([
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['100.64.0.0', 10], // shared address space (carrier-grade NAT)
  ['198.18.0.0', 15], // benchmarking networks
  ['fc00::', 7], // unique local addresses
]);

/** NAT64 addresses carry an IPv4 address in their last 32 bits and reach whatever that address reaches. */
const NAT64 = blockList([['64:ff9b::', 96]]);

/** What kind of address an IP address (v4 or v6, IPv4-mapped included) is. */
export function addressKind(address: string): AddressKind {
  const family = isIPv6(address) ? 'ipv6' : 'ipv4';
  if (family === 'ipv6' && NAT64.check(address, 'ipv6')) return addressKind(embeddedIPv4(address));
  // BlockList applies IPv4 rules to IPv4-mapped IPv6 addresses (::ffff:a.b.c.d) too.
  if (FORBIDDEN.check(address, family)) return 'forbidden';
  if (LOOPBACK.check(address, family)) return 'loopback';
  if (PRIVATE.check(address, family)) return 'private';
  return 'public';
}

export function addressAllowed(address: string, allow: readonly AddressAllowance[]): boolean {
  const kind = addressKind(address);
  return kind === 'public' || (kind !== 'forbidden' && allow.includes(kind));
}

/** The IPv4 address in the last 32 bits of an IPv6 address, read from its canonical text form. */
function embeddedIPv4(address: string): string {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const groups = canonical.split(':');
  const high = parseInt(groups.at(-2) || '0', 16);
  const low = parseInt(groups.at(-1) || '0', 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}
