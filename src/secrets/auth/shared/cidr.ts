/**
 * CIDR lists as auth methods use them (`token_bound_cidrs`, AppRole's `secret_id_bound_cidrs` and
 * per-secret-id `cidr_list`): validated when written, matched against the client address at login.
 * A bare address means a single host. IPv4-mapped IPv6 client addresses (`::ffff:10.0.0.1`) match
 * IPv4 blocks.
 */
import { BlockList, isIP } from 'node:net';
import { InvalidRequestError } from '../../errors.js';

/** Check and normalise a CIDR list; a malformed entry is a 400 naming it. */
export function parseCidrList(values: readonly string[], field: string): string[] {
  return values.map((value) => {
    const [address, prefix, extra] = value.split('/');
    const family = isIP(address ?? '');
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : /^\d{1,3}$/.test(prefix) ? Number(prefix) : NaN;
    if (!family || extra !== undefined || !(bits >= 0 && bits <= (family === 6 ? 128 : 32))) {
      throw new InvalidRequestError(`invalid CIDR block ${JSON.stringify(value)} in ${field}`);
    }
    return `${address}/${bits}`;
  });
}

/** Whether `address` lies in one of the (already validated) blocks; an empty list allows everyone. */
export function addressAllowed(address: string, cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return true;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, bits] = cidr.split('/') as [string, string];
    list.addSubnet(network, Number(bits), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  const family = isIP(address);
  if (family === 0) return false;
  return list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}
