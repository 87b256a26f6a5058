// CSRF: the API wants the `X-CSRF-Token` header on every unsafe request made with the session
// cookie; its value is in the (JavaScript-readable) `tcplens_csrf` cookie (tcplens/api/auth.py).

export const CSRF_HEADER = "X-CSRF-Token";
const CSRF_COOKIE = "tcplens_csrf";

export function csrfToken(): string | null {
  for (const part of document.cookie.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === CSRF_COOKIE) return decodeURIComponent(value.join("="));
  }
  return null;
}

export function isUnsafe(method: string): boolean {
  return !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase());
}
