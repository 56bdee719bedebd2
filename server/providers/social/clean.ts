// About a third of the tweets in the source CSV (all of coindesk's, Cointelegraph's, J_tsar's) were stored
// as the printed form of a Python byte string: b'Bitcoin \xe2\x80\x94 up' with escapes instead of
// characters. This turns such a text back into what was tweeted; other texts pass unchanged.
const ESCAPES: Record<string, number> = { n: 0x0a, t: 0x09, r: 0x0d, '\\': 0x5c, "'": 0x27, '"': 0x22 };

export function unwrapByteString(text: string): string {
  const m = /^b(['"])([\s\S]*)\1$/.exec(text);
  if (!m) return text;
  const body = m[2]!;
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === '\\' && i + 1 < body.length) {
      const next = body[i + 1]!;
      if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(body.slice(i + 2, i + 4))) {
        bytes.push(parseInt(body.slice(i + 2, i + 4), 16));
        i += 3;
        continue;
      }
      if (ESCAPES[next] !== undefined) {
        bytes.push(ESCAPES[next]);
        i += 1;
        continue;
      }
    }
    // Characters outside ASCII cannot appear in a printed byte string; keep them as UTF-8 anyway.
    bytes.push(...Buffer.from(c, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}
