// CSRF: the API wants the `X-CSRF-Token` header on every unsafe request made with the session
// cookie; its value is in the (JavaScript-readable) `__Host-tcplens_csrf` cookie, named
// `tcplens_csrf` where the server sets no Secure cookies (tcplens/api/auth.py).

export const CSRF_HEADER = "X-CSRF-Token";
const CSRF_COOKIES = ["__Host-tcplens_csrf", "tcplens_csrf"];

export function csrfToken(): string | null {
  for (const part of document.cookie.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name !== undefined && CSRF_COOKIES.includes(name))
      return decodeURIComponent(value.join("="));
  }
  return null;
}

export function isUnsafe(method: string): boolean {
  return !["GET", "HEAD", "OPTIONS"].includes(method.toUpperCase());
}
