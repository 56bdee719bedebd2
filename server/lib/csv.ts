// CSV the dashboard's exports write (usage, purchases, the request log): RFC 4180 fields, lines
// ended by CRLF. A text field a spreadsheet would run as a formula (=, +, -, @, tab or CR first)
// gets a leading apostrophe (OWASP's CSV injection advice): the request log holds tool names and
// messages a client chose.

/** One field: quoted when it holds a comma, quote, CR or LF, its quotes doubled. */
export function csvField(v: string | number | null): string {
  let s = v === null ? '' : String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s) && !/^[+-]?\d+(\.\d+)?$/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** One record, CRLF-terminated. */
export function csvLine(fields: readonly (string | number | null)[]): string {
  return `${fields.map(csvField).join(',')}\r\n`;
}
