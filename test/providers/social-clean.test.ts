// Tweets stored as printed Python byte strings are turned back into their text.
import { describe, expect, it } from 'vitest';
import { unwrapByteString } from '../../server/providers/social/clean.ts';

describe('unwrapByteString', () => {
  it('decodes \\xNN UTF-8 escapes and the usual backslash escapes inside b\'...\'', () => {
    expect(unwrapByteString("b'Subscribe! \\xf0\\x9f\\x98\\x8e\\n#Ethereum \\xc2\\xa0https://t.co/x'")).toBe('Subscribe! 😎\n#Ethereum \u00a0https://t.co/x');
    expect(unwrapByteString('b"It\'s \\"fine\\" \\\\ ok"')).toBe('It\'s "fine" \\ ok');
  });

  it('leaves other texts alone, including ones that merely start with b', () => {
    for (const t of ['bitcoin up', "b'unterminated", 'RT @x: b\'quoted\'']) expect(unwrapByteString(t)).toBe(t);
  });
});
