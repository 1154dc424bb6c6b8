import ipaddr from 'ipaddr.js';

/**
 * An address with its host part cut (decisions R8): IPv4 keeps 3 octets, IPv6 its first 48 bits
 * (the last 80 zeroed). An IPv4-mapped IPv6 address counts as IPv4. Text that is no address is dropped.
 */
export function anonymizeIp(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return null;
  let addr = ipaddr.parse(ip);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  const bytes = addr.toByteArray();
  const keep = addr.kind() === 'ipv4' ? 3 : 6;
  for (let i = keep; i < bytes.length; i++) bytes[i] = 0;
  return ipaddr.fromByteArray(bytes).toString();
}
