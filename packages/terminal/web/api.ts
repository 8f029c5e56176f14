/** The terminal's API, same origin (the session cookie), with its error shape. */

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

let clockOffsetMs = 0;

/** The server's time (from its Date headers): signed requests must be within 60 s of it. */
export const serverNow = (): number => Date.now() + clockOffsetMs;

export async function api<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const date = Date.parse(response.headers.get('date') ?? '');
  // A Date header has whole seconds: only a skew beyond them is corrected.
  if (Number.isFinite(date) && Math.abs(date - Date.now()) > 2000) clockOffsetMs = date - Date.now();
  const json = (await response.json().catch(() => ({}))) as { message?: string; code?: string };
  if (!response.ok) throw new ApiError(json.message ?? `HTTP ${response.status}`, response.status, json.code);
  return json as T;
}

/** An error as one line for the page: the message and its code. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return `${error.message}${error.code ? ` (${error.code})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}
