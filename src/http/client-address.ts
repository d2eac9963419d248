/**
 * The client address that per-client limits count by. An IPv4 address as it is (also when the socket shows it
 * IPv4-mapped, `::ffff:192.0.2.1`); an IPv6 address by its /64 network, the block one host or one customer is
 * usually given, so that a client cannot get a fresh budget by changing the low bits of its address.
 */
export function clientAddress(address: string | undefined): string {
  if (!address) return '';
  if (!address.includes(':')) return address;
  const plain = address.split('%')[0].toLowerCase();
  if (plain.startsWith('::ffff:') && plain.includes('.')) return plain.slice('::ffff:'.length);
  const [head, tail] = plain.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const front = groups(head);
  // A dotted IPv4 tail (`64:ff9b::192.0.2.1`) stands for two groups.
  const back = groups(tail).flatMap((g) => (g.includes('.') ? ['0', '0'] : [g]));
  const all = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${all
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}
