import { useWorkspaceUsage } from "../../api/usage";
import { formatBytes } from "../../format/units";

/** "1.2 GB of 20 GB stored" with a meter: the workspace's captures against its quota. */
export function StorageUsage({ workspaceId }: { workspaceId: string | undefined }) {
  const usage = useWorkspaceUsage(workspaceId);
  if (!usage.data) return null;
  const { used_bytes: used, quota_bytes: quota } = usage.data;
  return (
    <p className="storage-usage muted" data-testid="storage-usage">
      <meter
        min={0}
        max={quota}
        value={used}
        low={0.8 * quota}
        high={0.95 * quota}
        optimum={0}
        aria-label="Storage used"
      />
      <span>
        {formatBytes(used)} of {formatBytes(quota)} stored
      </span>
    </p>
  );
}
