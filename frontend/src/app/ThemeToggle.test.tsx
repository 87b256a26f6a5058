import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ThemeToggle } from "./ThemeToggle";

afterEach(() => {
  cleanup();
  localStorage.clear();
  delete document.documentElement.dataset.theme;
});

describe("ThemeToggle", () => {
  it("cycles system → light → dark → system and forces the theme on <html>", () => {
    render(<ThemeToggle />);
    const button = screen.getByRole("button");
    expect(button.getAttribute("aria-label")).toBe("Theme: system");
    expect(document.documentElement.dataset.theme).toBeUndefined();

    fireEvent.click(button);
    expect(button.getAttribute("aria-label")).toBe("Theme: light");
    expect(document.documentElement.dataset.theme).toBe("light");

    fireEvent.click(button);
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(localStorage.getItem("tcplens.theme")).toBe("dark");

    fireEvent.click(button);
    expect(button.getAttribute("aria-label")).toBe("Theme: system");
    expect(document.documentElement.dataset.theme).toBeUndefined();
    expect(localStorage.getItem("tcplens.theme")).toBeNull();
  });

  it("starts from the remembered choice", () => {
    localStorage.setItem("tcplens.theme", "dark");
    render(<ThemeToggle />);
    expect(screen.getByRole("button", { name: "Theme: dark" })).toBeTruthy();
    expect(document.documentElement.dataset.theme).toBe("dark");
  });
});
