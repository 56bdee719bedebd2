/** A long wallet address shortened for headers and buttons (the full one goes in a title or beside it). */
export function short(address: string): string {
  return address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}
