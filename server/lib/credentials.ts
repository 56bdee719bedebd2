// What a credential (an API key, an OAuth connection) is now, for every list that shows one.

/** Revoked wins over expired. */
export function credentialStatus(c: { revoked_at: Date | null; expires_at: Date | null }, now = Date.now()): 'active' | 'revoked' | 'expired' {
  if (c.revoked_at) return 'revoked';
  if (c.expires_at && c.expires_at.getTime() <= now) return 'expired';
  return 'active';
}
