import { useEffect, useState } from "react";
import { applyTheme, nextTheme, storedTheme, type ThemeChoice } from "./theme";

const LABEL: Record<ThemeChoice, string> = {
  system: "Theme: system",
  light: "Theme: light",
  dark: "Theme: dark",
};

export function ThemeToggle() {
  const [choice, setChoice] = useState<ThemeChoice>(storedTheme);

  useEffect(() => applyTheme(choice), [choice]);

  return (
    <button
      type="button"
      className="theme-toggle"
      onClick={() => setChoice(nextTheme)}
      title="Switch colour theme"
    >
      {LABEL[choice]}
    </button>
  );
}
