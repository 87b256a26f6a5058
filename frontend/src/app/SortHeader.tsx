/** A sortable column's header: a button that sorts by it, and aria-sort saying how it is sorted. */
export function SortHeader(props: {
  label: string;
  title?: string | undefined;
  numeric?: boolean | undefined;
  /** How the table is sorted by this column; null when by another. */
  order: "asc" | "desc" | null;
  onSort: () => void;
}) {
  const { order } = props;
  return (
    <th
      scope="col"
      className={props.numeric ? "num" : undefined}
      aria-sort={order === null ? "none" : order === "asc" ? "ascending" : "descending"}
    >
      <button type="button" className="th-button" title={props.title} onClick={props.onSort}>
        {props.label}
        <span className="th-button__arrow" aria-hidden="true">
          {order === null ? "" : order === "asc" ? "▲" : "▼"}
        </span>
      </button>
    </th>
  );
}
