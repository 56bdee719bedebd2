// Cursor paging for list results (DESIGN.md §4: limit default 20, max 100, and a cursor).
import { z } from 'zod';
import { ApiError } from '../../errors.ts';

export const limitSchema = z.number().int().min(1).max(100).default(20).describe('Items per page (1-100).');
export const cursorSchema = z.string().max(200).optional().describe('next_cursor from the previous page.');

export function encodeCursor(offset: number): string {
  return Buffer.from(JSON.stringify({ o: offset })).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { o?: unknown };
    if (typeof parsed.o === 'number' && Number.isInteger(parsed.o) && parsed.o >= 0) return parsed.o;
  } catch {
    // fall through
  }
  throw new ApiError('INVALID_PARAMS', 'The cursor is not one this service issued.', {
    issues: [{ path: 'cursor', message: 'invalid cursor' }],
  });
}

export function page<T>(items: T[], limit: number, cursor: string | undefined): { items: T[]; next_cursor?: string } {
  const offset = decodeCursor(cursor);
  const slice = items.slice(offset, offset + limit);
  return offset + limit < items.length ? { items: slice, next_cursor: encodeCursor(offset + limit) } : { items: slice };
}
