import type { ReactNode } from "react";

/** The header cell over a table's row-action buttons: named for screen readers only. */
export function ActionsHeader() {
  return (
    <th scope="col">
      <span className="visually-hidden">Actions</span>
    </th>
  );
}

/**
 * A destructive action on one row or selection (Revoke, Remove, Cancel, Delete): a small
 * danger button. `label` names what it acts on for screen readers when the visible text alone
 * ("Revoke") does not.
 */
export function DangerButton({
  label,
  disabled,
  onClick,
  children,
}: {
  label?: string | undefined;
  disabled?: boolean;
  onClick: () => void;
  children: ReactNode;
}) {
  return (
    <button
      type="button"
      className="button button--danger button--small"
      aria-label={label}
      disabled={disabled}
      onClick={onClick}
    >
      {children}
    </button>
  );
}
