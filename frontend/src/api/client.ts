// The one way the SPA talks to the API: JSON over fetch, errors as RFC 9457 problem documents
// (the backend renders every error as application/problem+json, see tcplens/api/problems.py).

export const API_PREFIX = "/api/v1";

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

/** GET `${API_PREFIX}${path}` and return its JSON body, or throw an ApiError with the problem. */
export async function getJson<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`${API_PREFIX}${path}`, {
    ...init,
    headers: { Accept: "application/json", ...init?.headers },
  });
  if (!response.ok) {
    throw new ApiError(await problemOf(response));
  }
  return (await response.json()) as T;
}

async function problemOf(response: Response): Promise<Problem> {
  const fallback: Problem = {
    type: "about:blank",
    title: response.statusText || "Request failed",
    status: response.status,
    detail: `the server answered ${response.status}`,
    code: "http_error",
  };
  if (!response.headers.get("content-type")?.includes("json")) {
    return fallback;
  }
  try {
    return { ...fallback, ...((await response.json()) as Partial<Problem>) };
  } catch {
    return fallback;
  }
}
