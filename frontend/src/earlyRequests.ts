// Imported first by main.tsx: modules run in import order, so the page load's requests leave
// while the rest of the bundle is still being evaluated (on a flow page, the session check and the
// whole-flow series are most of the wait for the first graph).

import { startSessionCheck } from "./api/session";
import { queryClient } from "./app/queryClient";
import { prefetchFlowOverview } from "./charts/series/fetchSeries";

startSessionCheck();
prefetchFlowOverview(queryClient, window.location.pathname);
