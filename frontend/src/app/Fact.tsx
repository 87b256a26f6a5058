/** One labelled number in a facts row (a <dl> with class "facts"). */
export function Fact({ label, value }: { label: string; value: string }) {
  return (
    <div className="facts__item">
      <dt>{label}</dt>
      <dd className="num">{value}</dd>
    </div>
  );
}
