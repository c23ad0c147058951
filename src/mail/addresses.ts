/** Addresses without repeats, comparing them ignoring case; the first spelling of each is kept, in order. */
export function distinctAddresses(addresses: string[]): string[] {
  const seen = new Set<string>();
  return addresses.filter((address) => {
    const key = address.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
