import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may never be delivered to without the development switch: loopback,
 * private, shared and link-local ranges, and those that name no single public host (this
 * network, multicast, reserved, documentation), for IPv4 and IPv6. IPv4-mapped IPv6 addresses
 * are checked as the IPv4 address they carry.
 */
const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, bits, 'ipv6');

/** The IPv4 address an IPv4-mapped IPv6 address (::ffff:a.b.c.d or ::ffff:xxxx:xxxx) carries, else null. */
function mappedIpv4(address: string): string | null {
  const m = /^(?:0*:)*:?ffff:(.+)$/i.exec(address.replace(/^\[|\]$/g, ''));
  if (!m) return null;
  const [, rest = ''] = m;
  if (isIP(rest) === 4) return rest;
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(rest);
  if (!hex) return null;
  const [, high = '', low = ''] = hex;
  const hi = Number.parseInt(high, 16);
  const lo = Number.parseInt(low, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether an IP address (v4 or v6, no brackets) is in a range webhooks may not reach. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) {
    const v4 = mappedIpv4(address);
    if (v4 !== null) return BLOCKED.check(v4, 'ipv4');
    return BLOCKED.check(address, 'ipv6');
  }
  return true;
}

/** Resolves a host name to every address it has (A and AAAA), as the system resolver does. */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemResolver: Resolver = (host) => dnsLookup(host, { all: true, verbatim: true });

export type UrlCheck =
  | { ok: true; url: URL; host: string; address: string; family: 4 | 6 }
  | { ok: false; problem: string };

/**
 * Whether a webhook URL may be called now: `https` (or `http` when private addresses are
 * allowed), no credentials, and a host whose every resolved address is public unless
 * `allowPrivate`. The address returned is the one to connect to (the check and the connection
 * use the same resolution, so a name cannot resolve to a public address for the check and a
 * private one for the call).
 */
export async function checkWebhookUrl(
  raw: string,
  options: { allowPrivate: boolean; resolve?: Resolver },
): Promise<UrlCheck> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: 'must be an absolute URL' };
  }
  if (url.protocol !== 'https:' && !(options.allowPrivate && url.protocol === 'http:'))
    return { ok: false, problem: 'must be an https URL' };
  if (url.username !== '' || url.password !== '')
    return { ok: false, problem: 'must not carry a user name or password' };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === '') return { ok: false, problem: 'must name a host' };
  let addresses: { address: string; family: number }[];
  if (isIP(host) !== 0) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await (options.resolve ?? systemResolver)(host);
    } catch (err) {
      return {
        ok: false,
        problem: `its host ${host} does not resolve (${(err as { code?: string }).code ?? 'error'})`,
      };
    }
  }
  if (!options.allowPrivate) {
    const blocked = addresses.find((a) => isBlockedAddress(a.address));
    if (blocked)
      return {
        ok: false,
        problem:
          blocked.address === host
            ? `${host} is a private, loopback, link-local or reserved address`
            : `its host ${host} resolves to ${blocked.address}, a private, loopback, link-local or reserved address`,
      };
  }
  const [first] = addresses;
  if (first === undefined) return { ok: false, problem: `its host ${host} does not resolve` };
  return { ok: true, url, host, address: first.address, family: first.family === 6 ? 6 : 4 };
}
