/** A placeholder of the final size while data loads, so nothing jumps when it arrives. */
export function Skeleton({ className, label }: { className: string; label: string }) {
  return (
    <div className={`skeleton ${className}`} role={label ? "status" : undefined} aria-busy="true">
      {label && <span className="visually-hidden">{label}</span>}
    </div>
  );
}
