import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/*
 * A metric family in one call: name, help, labels (and buckets), registered in `registry`. The
 * inventories declare dozens of families; prom-client's option object spelled out for each one
 * buried the names and helps under the same five lines of punctuation.
 */

export function counter<T extends string = string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly T[] = [],
  collect?: (counter: Counter<T>) => void,
): Counter<T> {
  return new Counter({
    name,
    help,
    labelNames,
    registers: [registry],
    ...(collect
      ? {
          collect(this: Counter<T>) {
            collect(this);
          },
        }
      : {}),
  });
}

export function gauge<T extends string = string>(registry: Registry, name: string, help: string, labelNames: readonly T[] = []): Gauge<T> {
  return new Gauge({ name, help, labelNames, registers: [registry] });
}

export function histogram<T extends string = string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly T[],
  buckets: readonly number[],
  collect?: (histogram: Histogram<T>) => void,
): Histogram<T> {
  return new Histogram({
    name,
    help,
    labelNames,
    buckets: [...buckets],
    registers: [registry],
    ...(collect
      ? {
          collect(this: Histogram<T>) {
            collect(this);
          },
        }
      : {}),
  });
}
