// Names from user input read and written as own properties only, never through Object.prototype.

/**
 * The value `record` holds under `name` itself, or undefined: `constructor`, `toString` or
 * `__proto__` name nothing unless the record really has them.
 */
export function ownValue<T>(record: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(record, name) ? record[name] : undefined;
}

/**
 * Sets `name` on `record` as an own, enumerable data property. Plain assignment would, for the name
 * `__proto__`, replace the record's prototype instead (docs/decisions/0115-no-inherited-names.md).
 */
export function setOwn<T>(record: Record<string, T>, name: string, value: T): void {
  Object.defineProperty(record, name, { value, enumerable: true, writable: true, configurable: true });
}
