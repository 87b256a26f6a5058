import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";
import { swaggerUiAssets } from "./swagger-ui.vite.ts";
import { wiregasmAssets } from "./wiregasm.vite.ts";

// `make dev` runs the API on TCPLENS_DEV_API (default http://127.0.0.1:8000) and this dev server in
// front of it: the SPA with hot reload, /api proxied, so the browser sees one origin as in production.
const api = process.env.TCPLENS_DEV_API ?? "http://127.0.0.1:8000";

export default defineConfig({
  plugins: [react(), wiregasmAssets(), swaggerUiAssets()],
  server: {
    host: "127.0.0.1",
    port: 5173,
    strictPort: true,
    proxy: { "/api": { target: api, changeOrigin: false } },
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // No source maps in the build the server ships: they would hand out the SPA's sources.
    sourcemap: false,
  },
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
  },
});
