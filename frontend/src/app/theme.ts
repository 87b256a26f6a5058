// The colour theme: "system" follows prefers-color-scheme; "light"/"dark" are forced through
// <html data-theme> (see styles/theme.css) and remembered in localStorage.

export type ThemeChoice = "system" | "light" | "dark";

const STORAGE_KEY = "tcplens.theme";
const ORDER: readonly ThemeChoice[] = ["system", "light", "dark"];

export function storedTheme(): ThemeChoice {
  const value = globalThis.localStorage?.getItem(STORAGE_KEY);
  return value === "light" || value === "dark" ? value : "system";
}

export function applyTheme(choice: ThemeChoice): void {
  const root = document.documentElement;
  if (choice === "system") {
    delete root.dataset.theme;
    globalThis.localStorage?.removeItem(STORAGE_KEY);
  } else {
    root.dataset.theme = choice;
    globalThis.localStorage?.setItem(STORAGE_KEY, choice);
  }
}

export function nextTheme(choice: ThemeChoice): ThemeChoice {
  return ORDER[(ORDER.indexOf(choice) + 1) % ORDER.length] ?? "system";
}
