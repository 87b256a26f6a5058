import { useEffect, useState } from "react";
import { applyTheme, nextTheme, storedTheme, type ThemeChoice } from "./theme";

const LABEL: Record<ThemeChoice, string> = {
  system: "Theme: system",
  light: "Theme: light",
  dark: "Theme: dark",
};

/** One glyph per choice: half-filled (follows the system), sun, moon. */
function Glyph({ choice }: { choice: ThemeChoice }) {
  const common = { fill: "none", stroke: "currentColor", strokeWidth: 1.6 } as const;
  return (
    <svg viewBox="0 0 16 16" width="15" height="15" aria-hidden="true">
      {choice === "system" && (
        <>
          <circle cx="8" cy="8" r="5.5" {...common} />
          <path d="M8 2.5 A5.5 5.5 0 0 1 8 13.5 Z" fill="currentColor" />
        </>
      )}
      {choice === "light" && (
        <>
          <circle cx="8" cy="8" r="3" {...common} />
          <path
            d="M8 1.5v1.6M8 12.9v1.6M1.5 8h1.6M12.9 8h1.6M3.4 3.4l1.1 1.1M11.5 11.5l1.1 1.1M3.4 12.6l1.1-1.1M11.5 4.5l1.1-1.1"
            {...common}
          />
        </>
      )}
      {choice === "dark" && (
        <path d="M12.5 10.2A5.5 5.5 0 0 1 5.8 3.5 5.5 5.5 0 1 0 12.5 10.2Z" {...common} />
      )}
    </svg>
  );
}

/** Cycles system → light → dark; the choice is remembered (theme.ts). */
export function ThemeToggle() {
  const [choice, setChoice] = useState<ThemeChoice>(storedTheme);

  useEffect(() => applyTheme(choice), [choice]);

  return (
    <button
      type="button"
      className="theme-toggle"
      aria-label={LABEL[choice]}
      onClick={() => setChoice(nextTheme)}
      title={`${LABEL[choice]} (click to switch)`}
    >
      <Glyph choice={choice} />
    </button>
  );
}
