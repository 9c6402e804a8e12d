import { z } from "zod";

/** The field names of a config-model schema, sorted: an object's keys, a union's keys all together. */
export function keysOf(t: z.ZodTypeAny): string[] {
  // zod 4: a refinement is no wrapper; a transform is a pipe from its input.
  if (t instanceof z.ZodOptional || t instanceof z.ZodDefault || t instanceof z.ZodPrefault)
    return keysOf(t.unwrap() as z.ZodTypeAny);
  if (t instanceof z.ZodPipe) return keysOf(t.in as z.ZodTypeAny);
  if (t instanceof z.ZodObject) return Object.keys(t.shape).sort();
  if (t instanceof z.ZodDiscriminatedUnion)
    return [...new Set((t.options as z.ZodObject<z.ZodRawShape>[]).flatMap((o) => keysOf(o)))].sort();
  throw new Error(`no keys in ${t.constructor.name}`);
}
