// The one way the SPA talks to the API: openapi-fetch over the types generated from the server's
// OpenAPI schema (schema.gen.ts, `make api-client`), with the CSRF header on unsafe requests and
// every error turned into an ApiError carrying the server's problem document (RFC 9457; the
// backend renders every error as application/problem+json, see tcplens/api/problems.py).

import createClient, { type Middleware } from "openapi-fetch";
import { CSRF_HEADER, csrfToken, isUnsafe } from "./csrf";
import type { paths } from "./schema.gen";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
}

export class ApiError extends Error {
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail);
    this.name = "ApiError";
    this.problem = problem;
  }
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (!isUnsafe(request.method)) return request;
    const token = csrfToken(); // reads document.cookie: only when it is needed
    if (token) request.headers.set(CSRF_HEADER, token);
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: "", credentials: "same-origin" });
api.use(csrf);

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The body of a successful answer, or throw an ApiError with the problem the server sent. */
export async function unwrap<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiError(problemFrom(response, error));
  return data as T;
}

export function problemFrom(
  response: { status: number; statusText: string },
  body: unknown,
): Problem {
  const fallback: Problem = {
    type: "about:blank",
    title: response.statusText || "Request failed",
    status: response.status,
    detail: `the server answered ${response.status}`,
    code: "http_error",
  };
  if (body && typeof body === "object") return { ...fallback, ...(body as Partial<Problem>) };
  return fallback;
}

/** 404, or 410: a share link that was revoked or has expired (codes `share_revoked`,
 * `share_expired`) is no more there than one that never existed; retrying will not bring it. */
export function isNotFound(error: unknown): boolean {
  return (
    error instanceof ApiError && (error.problem.status === 404 || error.problem.status === 410)
  );
}

/** A 4xx answer that asking again will not change (all but 408 Request Timeout and 429). */
export function isFinalRefusal(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  const { status } = error.problem;
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}

export function isUnauthenticated(error: unknown): boolean {
  return error instanceof ApiError && error.problem.status === 401;
}

/** What to tell a user about a failed request: the server's words when it sent some. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.problem.detail || error.problem.title;
  if (error instanceof Error) return error.message;
  return "something went wrong";
}
