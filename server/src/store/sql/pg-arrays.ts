// Rows as PostgreSQL array parameters (decision 0320): one parameter per column, whatever the
// number of rows, so that a statement's text, and its named statement, is the same for any count.

/**
 * A column as one array literal (`{"a","b",NULL}`), sent as text and cast in the statement
 * (`?::text[]`): parsed by the array's element type, far cheaper for the database than JSON.
 */
export function arrayLiteral(values: readonly (string | number | null)[]): string {
  let text = "{";
  for (const [i, value] of values.entries()) {
    if (i > 0) text += ",";
    if (value === null) text += "NULL";
    else if (typeof value === "number") text += String(value);
    else text += `"${value.replace(/[\\"]/g, "\\$&")}"`;
  }
  return `${text}}`;
}
